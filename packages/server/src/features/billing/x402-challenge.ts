import { x402Limits, type X402Discovery, type X402PaymentRequired, type X402RefusalReason } from '@svc/schemas';
import { encodePaymentRequiredHeader, PAYMENT_REQUIRED_CACHE_CONTROL } from '@x402/core/http';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PaymentRequirementsV1 } from '@x402/core/types/v1';
import type { X402Config } from './x402-config.ts';

/** What one call costs, in each protocol version's words. Built from configuration only: no facilitator round trip. */
export interface X402Offer {
  resourceUrl: string;
  v2: PaymentRequirements;
  v1: PaymentRequirementsV1 & { scheme: 'exact'; extra: { name: string; version: string } };
}

const DESCRIPTION = 'One svc chat completion (OpenAI wire format)';

export function offerFor(config: X402Config & { payTo: string }, resourceUrl: string): X402Offer {
  const extra = { name: config.assetName, version: config.assetVersion };
  return {
    resourceUrl,
    v2: {
      scheme: x402Limits.scheme,
      network: config.network as PaymentRequirements['network'],
      amount: x402Limits.amountPerCall,
      asset: config.asset,
      payTo: config.payTo,
      maxTimeoutSeconds: x402Limits.maxTimeoutSeconds,
      extra,
    },
    v1: {
      scheme: x402Limits.scheme,
      network: config.networkV1 as PaymentRequirementsV1['network'],
      maxAmountRequired: x402Limits.amountPerCall,
      resource: resourceUrl,
      description: DESCRIPTION,
      mimeType: 'application/json',
      outputSchema: {},
      payTo: config.payTo,
      maxTimeoutSeconds: x402Limits.maxTimeoutSeconds,
      asset: config.asset,
      extra,
    },
  };
}

/** A refusal: the reason for programs and a message for people. */
export interface Refusal {
  reason: X402RefusalReason;
  message: string;
}

/**
 * The 402: the v2 challenge in `PAYMENT-REQUIRED`, the v1 challenge as the body, a `Link` to the
 * well-known document. Every refusal carries a fresh challenge, so a client can pay again at once.
 */
export function challenge(
  offer: X402Offer,
  refusal: Refusal,
  requestId: string,
  discoveryUrl: string,
): { status: 402; body: X402PaymentRequired; headers: Record<string, string> } {
  const v2: PaymentRequired = {
    x402Version: 2,
    error: refusal.reason === 'payment_required' ? undefined : refusal.reason,
    resource: { url: offer.resourceUrl, description: DESCRIPTION, mimeType: 'application/json' },
    accepts: [offer.v2],
  };
  return {
    status: 402,
    headers: {
      'payment-required': encodePaymentRequiredHeader(v2),
      link: `<${discoveryUrl}>; rel="payment"`,
      // A challenge is per request: no cache may keep it.
      'cache-control': PAYMENT_REQUIRED_CACHE_CONTROL,
    },
    body: {
      x402Version: 1,
      error: refusal.message,
      accepts: [offer.v1],
      code: refusal.reason === 'payment_required' ? 'x402_payment_required' : 'x402_payment_refused',
      reason: refusal.reason,
      request_id: requestId,
    },
  };
}

/** The well-known document: the same facts the challenge carries, readable before paying. */
export function discoveryDocument(config: X402Config): X402Discovery {
  return {
    x402Version: 2,
    versions: [2, 1],
    enabled: config.payTo !== undefined,
    scheme: x402Limits.scheme,
    network: config.network,
    network_v1: config.networkV1,
    asset: config.asset,
    asset_name: config.assetName,
    asset_version: config.assetVersion,
    amount: x402Limits.amountPerCall,
    pay_to: config.payTo ?? null,
    max_timeout_seconds: x402Limits.maxTimeoutSeconds,
    facilitator: config.facilitatorUrl,
    resources: [...x402Limits.resources],
  };
}
