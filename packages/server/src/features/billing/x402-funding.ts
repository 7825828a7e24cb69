import { x402Limits, type ChatCompletionsBody } from '@svc/schemas';
import { encodePaymentResponseHeader, HTTPFacilitatorClient, withPrivateCacheControl } from '@x402/core/http';
import { SettleError, VerifyError, type PaymentPayload, type PaymentRequirements, type SettleResponse, type VerifyResponse } from '@x402/core/types';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { RequestContext } from '../../http/request-context.ts';
import { ServiceError } from '../../service-error.ts';
import type { FundingDecision, FundingStep } from './funding-step.ts';
import { challenge, offerFor, type Refusal, type X402Offer } from './x402-challenge.ts';
import type { X402Config } from './x402-config.ts';
import { claimAuthorization, markSettled, releaseAuthorization } from './x402-nonces.ts';
import { checkPayment, type CheckedPayment } from './x402-payment.ts';

export interface X402FundingDeps {
  sequelize: Sequelize;
  config: X402Config & { payTo: string };
  resourceUrl: () => string;
  discoveryUrl: () => string;
  log: Logger;
}

/** The payment header a client sent: v2's `PAYMENT-SIGNATURE` first, else v1's `X-PAYMENT`. */
function paymentHeaderOf(headers: RequestContext['headers']): { value: string; version: 1 | 2 } | undefined {
  const v2 = headers['payment-signature'];
  if (typeof v2 === 'string' && v2 !== '') return { value: v2, version: 2 };
  const v1 = headers['x-payment'];
  if (typeof v1 === 'string' && v1 !== '') return { value: v1, version: 1 };
  return undefined;
}

const facilitatorDown = (cause: unknown) =>
  new ServiceError('x402_facilitator_error', 'The x402 facilitator could not be reached or answered badly; the payment was not used, send it again.', {
    cause,
    retryAfterSeconds: 2,
  });

/** The facilitator's verdict; its refusals arrive as answers or, on a non-2xx status, as VerifyError. */
async function verifyWith(facilitator: HTTPFacilitatorClient, payment: CheckedPayment): Promise<VerifyResponse> {
  try {
    return await facilitator.verify(payment.payload as PaymentPayload, payment.requirements as PaymentRequirements);
  } catch (error) {
    if (error instanceof VerifyError) return { isValid: false, invalidReason: error.invalidReason, invalidMessage: error.invalidMessage };
    throw facilitatorDown(error);
  }
}

async function settleWith(facilitator: HTTPFacilitatorClient, payment: CheckedPayment): Promise<SettleResponse> {
  try {
    return await facilitator.settle(payment.payload as PaymentPayload, payment.requirements as PaymentRequirements);
  } catch (error) {
    if (error instanceof SettleError)
      return {
        success: false,
        errorReason: error.errorReason,
        errorMessage: error.errorMessage,
        transaction: error.transaction ?? '',
        network: payment.requirements.network,
      };
    throw facilitatorDown(error);
  }
}

/**
 * x402 as a funding step: the payment is checked here (signature, payee, amount, window), its
 * nonce claimed in the database, verified by the facilitator, and settled only when the call
 * produced a whole answer, before that answer is sent. A call that fails is never settled, so
 * the payer is not charged and the claim is released; a payment that fails to settle withholds
 * the answer and answers 402 with a fresh challenge.
 */
export function x402Funding(deps: X402FundingDeps): FundingStep {
  const facilitator = new HTTPFacilitatorClient({ url: deps.config.facilitatorUrl, timeoutMs: deps.config.facilitatorTimeoutMs });
  const refused = (offer: X402Offer, refusal: Refusal, request: RequestContext) => ({
    kind: 'answer' as const,
    ...challenge(offer, refusal, request.requestId, deps.discoveryUrl()),
  });

  return {
    async reserve(_body: ChatCompletionsBody, request: RequestContext): Promise<FundingDecision> {
      const offer = offerFor(deps.config, deps.resourceUrl());
      const header = paymentHeaderOf(request.headers);
      if (!header) {
        const message = `A call costs ${x402Limits.amountPerCall} base units of ${deps.config.asset} on ${deps.config.network}; pay with x402 (PAYMENT-SIGNATURE, or X-PAYMENT for v1).`;
        return refused(offer, { reason: 'payment_required', message }, request);
      }
      const checked = await checkPayment(header, offer, deps.config);
      if (!checked.ok) return refused(offer, checked.refusal, request);
      const payment = checked.payment;
      const { authorization } = payment;
      const claimId = await claimAuthorization(deps.sequelize, {
        network: deps.config.network,
        asset: deps.config.asset,
        payer: authorization.from,
        nonce: authorization.nonce,
        x402Version: payment.version,
        amount: authorization.value,
        payTo: authorization.to,
        requestId: request.requestId,
      });
      if (!claimId)
        return refused(
          offer,
          {
            reason: 'payment_replayed',
            message: `The authorization nonce ${authorization.nonce} of ${authorization.from} was already used (or is in use); sign a new payment.`,
          },
          request,
        );

      let verified: VerifyResponse;
      try {
        verified = await verifyWith(facilitator, payment);
      } catch (error) {
        await releaseAuthorization(deps.sequelize, claimId, 'facilitator_unreachable');
        throw error;
      }
      if (!verified.isValid) {
        await releaseAuthorization(deps.sequelize, claimId, `verify:${verified.invalidReason ?? 'invalid'}`);
        const detail = [verified.invalidReason, verified.invalidMessage].filter(Boolean).join(': ') || 'no reason given';
        return refused(offer, { reason: 'verification_failed', message: `The facilitator refused the payment (${detail}).` }, request);
      }

      return {
        kind: 'proceed',
        timing: 'before-delivery',
        async settle(outcome) {
          if (!outcome.ok) {
            // No answer, no charge: the authorization was never sent to the chain.
            await releaseAuthorization(deps.sequelize, claimId, `call:${outcome.code}`);
            return;
          }
          let settled: SettleResponse;
          try {
            settled = await settleWith(facilitator, payment);
          } catch (error) {
            await releaseAuthorization(deps.sequelize, claimId, 'facilitator_unreachable');
            throw error;
          }
          if (!settled.success) {
            await releaseAuthorization(deps.sequelize, claimId, `settle:${settled.errorReason ?? 'failed'}`);
            const detail = [settled.errorReason, settled.errorMessage].filter(Boolean).join(': ') || 'no reason given';
            return {
              replace: challenge(
                offer,
                { reason: 'settlement_failed', message: `The payment could not be settled (${detail}); the answer was withheld and nothing was charged.` },
                request.requestId,
                deps.discoveryUrl(),
              ),
            };
          }
          await markSettled(deps.sequelize, claimId, settled.transaction).catch((error: unknown) =>
            deps.log.error({ err: error, claimId, transaction: settled.transaction }, 'recording a settled x402 payment failed'),
          );
          // A paid answer belongs to its payer: no shared cache may serve it to someone else.
          return {
            headers: {
              [payment.version === 2 ? 'payment-response' : 'x-payment-response']: encodePaymentResponseHeader(settled),
              'cache-control': withPrivateCacheControl(null),
            },
          };
        },
      };
    },
  };
}
