import { z } from 'zod';

/**
 * x402 pay-per-call (inference-billing-api section 4.7): one chat completion costs 5000 base
 * units of a dollar-pegged stablecoin (USDC has 6 decimals: 0.005 USD), paid with the `exact`
 * scheme (an EIP-3009 transferWithAuthorization signed by the payer).
 */
export const x402Limits = {
  /** Base units of the asset per chat completion, as the wire carries it (a decimal string). */
  amountPerCall: '5000',
  scheme: 'exact',
  /** How long the payer's authorization may stay valid (the challenge's `maxTimeoutSeconds`). */
  maxTimeoutSeconds: 300,
  /** The one resource x402 pays for, as the well-known document names it. */
  resources: ['POST /x402/chat/completions'],
} as const;

/** Why a payment was refused: the 402's `reason`, stable for programs. */
export const X402RefusalReason = z
  .enum([
    'payment_required',
    'payment_malformed',
    'payment_unsupported',
    'requirements_mismatch',
    'signature_invalid',
    'payee_mismatch',
    'amount_mismatch',
    'authorization_expired',
    'authorization_not_yet_valid',
    'payment_replayed',
    'verification_failed',
    'settlement_failed',
  ])
  .meta({ id: 'X402RefusalReason' });
export type X402RefusalReason = z.infer<typeof X402RefusalReason>;

/** One way to pay in x402 v1 (the 402 body), as the legacy `x402-fetch` client reads it. */
export const X402RequirementsV1 = z
  .object({
    scheme: z.literal('exact'),
    network: z.string().describe('The v1 network name, e.g. `base-sepolia`.'),
    maxAmountRequired: z.string().describe('Base units of the asset, a decimal string.'),
    resource: z.string().describe('The URL paid for.'),
    description: z.string(),
    mimeType: z.string(),
    outputSchema: z.record(z.string(), z.unknown()).optional(),
    payTo: z.string(),
    maxTimeoutSeconds: z.number().int().positive(),
    asset: z.string().describe('The token contract address.'),
    extra: z.object({ name: z.string(), version: z.string() }).describe("The token's EIP-712 domain name and version."),
  })
  .meta({ id: 'X402RequirementsV1' });

/**
 * The 402 of the pay-per-call route. The body is x402 v1's challenge (`x402Version`, `accepts`,
 * `error`) plus svc's error fields; the v2 challenge travels base64-encoded in the
 * `PAYMENT-REQUIRED` header, and a `Link` header points at `/.well-known/x402`.
 */
export const X402PaymentRequired = z
  .object({
    x402Version: z.literal(1),
    error: z.string().describe('Why payment is required or was refused, for people.'),
    accepts: z.array(X402RequirementsV1).min(1),
    code: z.string().describe('`x402_payment_required` (no payment sent) or `x402_payment_refused` (a payment was sent and refused).'),
    reason: X402RefusalReason,
    request_id: z.string(),
  })
  .meta({ id: 'X402PaymentRequired' });
export type X402PaymentRequired = z.infer<typeof X402PaymentRequired>;

/** The public status and exact payment contract of the pay-per-call route. */
export const X402Discovery = z
  .object({
    x402Version: z.literal(2).describe('The protocol version the challenge header speaks; v1 clients are answered too.'),
    versions: z.array(z.number().int()).describe('Protocol versions accepted: 2 (`PAYMENT-SIGNATURE`) and 1 (`X-PAYMENT`).'),
    enabled: z.boolean().describe('False when no pay-to address is configured: the route then answers 503 `x402_not_configured`.'),
    scheme: z.literal('exact'),
    network: z.string().describe('CAIP-2 network id, e.g. `eip155:84532` (Base Sepolia).'),
    network_v1: z.string().describe('The same network under its x402 v1 name, e.g. `base-sepolia`.'),
    asset: z.string().describe('The token contract address.'),
    asset_name: z.string().describe("The token's EIP-712 domain name."),
    asset_version: z.string().describe("The token's EIP-712 domain version."),
    amount: z.string().describe('Base units of the asset per call.'),
    pay_to: z.string().nullable().describe('The address paid; null when not configured.'),
    max_timeout_seconds: z.number().int().positive(),
    facilitator: z.string().describe('The facilitator that verifies and settles payments.'),
    resources: z.array(z.string()).describe('What a payment buys, as `METHOD /path`.'),
  })
  .meta({ id: 'X402Discovery' });
export type X402Discovery = z.infer<typeof X402Discovery>;
