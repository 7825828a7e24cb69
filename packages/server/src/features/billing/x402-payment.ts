import { decodePaymentSignatureHeader } from '@x402/core/http';
import { PaymentPayloadSchema } from '@x402/core/schemas';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { PaymentPayloadV1, PaymentRequirementsV1 } from '@x402/core/types/v1';
import type { Hex } from 'viem';
import { z } from 'zod';
import type { Refusal, X402Offer } from './x402-challenge.ts';
import type { X402Config } from './x402-config.ts';
import { viemLibrary, x402Evm } from './x402-evm.ts';

const hex = (digits?: number) => z.string().regex(digits ? new RegExp(`^0x[0-9a-fA-F]{${digits}}$`) : /^0x[0-9a-fA-F]+$/);
const uint = z.union([z.string().regex(/^\d{1,78}$/), z.number().int().nonnegative()]).transform(String);

/** The `exact` scheme's EVM payload: an EIP-3009 transferWithAuthorization and its signature. */
const Eip3009Payload = z.object({
  signature: hex(),
  authorization: z.object({ from: hex(40), to: hex(40), value: uint, validAfter: uint, validBefore: uint, nonce: hex(64) }),
});
export type Eip3009Authorization = z.infer<typeof Eip3009Payload>['authorization'];

/** A payment that passed every local check, with what the facilitator needs to verify and settle it. */
export type CheckedPayment =
  | { version: 2; payload: PaymentPayload; requirements: PaymentRequirements; authorization: Eip3009Authorization }
  | { version: 1; payload: PaymentPayloadV1; requirements: PaymentRequirementsV1; authorization: Eip3009Authorization };

const refuse = (reason: Refusal['reason'], message: string) => ({ ok: false as const, refusal: { reason, message } });

/** A facilitator refuses authorizations this close to expiry: they might expire on the way to the chain. */
const EXPIRY_MARGIN_SECONDS = 6;

/**
 * Reads the payment header (`PAYMENT-SIGNATURE` for v2, `X-PAYMENT` for v1) and checks it here,
 * before any facilitator call: the scheme and network offered, the EIP-712 signature recovered
 * to the payer, the payee, the exact amount and the validity window. The nonce is checked
 * against the database by the caller, and the facilitator checks the chain (balance, nonce state).
 */
export async function checkPayment(
  header: { value: string; version: 1 | 2 },
  offer: X402Offer,
  config: X402Config,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<{ ok: true; payment: CheckedPayment } | ReturnType<typeof refuse>> {
  let decoded: unknown;
  try {
    decoded = decodePaymentSignatureHeader(header.value);
  } catch {
    return refuse('payment_malformed', `The ${header.version === 2 ? 'PAYMENT-SIGNATURE' : 'X-PAYMENT'} header is not base64-encoded JSON.`);
  }
  const parsed = PaymentPayloadSchema.safeParse(decoded);
  if (!parsed.success) return refuse('payment_malformed', 'The payment header is not an x402 payment payload.');
  // Checked through the parsed copy; the facilitator gets the payload exactly as the payer sent it.
  const payload = parsed.data;
  if (payload.x402Version !== header.version)
    return refuse(
      'payment_malformed',
      `An x402 v${payload.x402Version} payment was sent in the v${header.version} header; send v2 as PAYMENT-SIGNATURE, v1 as X-PAYMENT.`,
    );

  const scheme = payload.x402Version === 2 ? payload.accepted.scheme : payload.scheme;
  const network = payload.x402Version === 2 ? payload.accepted.network : payload.network;
  const expectedNetwork = payload.x402Version === 2 ? offer.v2.network : offer.v1.network;
  if (scheme !== offer.v2.scheme || network !== expectedNetwork)
    return refuse('payment_unsupported', `Only the ${offer.v2.scheme} scheme on ${expectedNetwork} is accepted; the payment is ${scheme} on ${network}.`);
  const evm = Eip3009Payload.safeParse(payload.payload);
  if (!evm.success) return refuse('payment_unsupported', 'Only EIP-3009 transferWithAuthorization payments are accepted (a signature and an authorization).');
  const { authorization, signature } = evm.data;

  let signer: string;
  try {
    signer = await viemLibrary().recoverTypedDataAddress({
      domain: { name: config.assetName, version: config.assetVersion, chainId: config.chainId, verifyingContract: config.asset as Hex },
      types: x402Evm().authorizationTypes,
      primaryType: 'TransferWithAuthorization',
      message: {
        from: authorization.from as Hex,
        to: authorization.to as Hex,
        value: BigInt(authorization.value),
        validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore),
        nonce: authorization.nonce as Hex,
      },
      signature: signature as Hex,
    });
  } catch {
    return refuse('signature_invalid', 'The payment signature cannot be read as an EIP-712 signature.');
  }
  if (signer.toLowerCase() !== authorization.from.toLowerCase())
    return refuse(
      'signature_invalid',
      `The EIP-712 signature was not made by ${authorization.from} over this authorization (token ${config.asset} on chain ${config.chainId}).`,
    );
  if (authorization.to.toLowerCase() !== offer.v2.payTo.toLowerCase())
    return refuse('payee_mismatch', `The authorization pays ${authorization.to}; this service is paid at ${offer.v2.payTo}.`);
  if (BigInt(authorization.value) !== BigInt(offer.v2.amount))
    return refuse('amount_mismatch', `The authorization is for ${authorization.value} base units; a call costs exactly ${offer.v2.amount}.`);
  if (BigInt(authorization.validBefore) < BigInt(nowSeconds + EXPIRY_MARGIN_SECONDS))
    return refuse('authorization_expired', `The authorization expired (validBefore ${authorization.validBefore}, now ${nowSeconds}); sign a new one.`);
  if (BigInt(authorization.validAfter) > BigInt(nowSeconds))
    return refuse('authorization_not_yet_valid', `The authorization is valid only after ${authorization.validAfter} (now ${nowSeconds}).`);

  if (payload.x402Version === 2) {
    const accepted = payload.accepted;
    const same =
      accepted.asset.toLowerCase() === offer.v2.asset.toLowerCase() &&
      accepted.payTo.toLowerCase() === offer.v2.payTo.toLowerCase() &&
      accepted.amount === offer.v2.amount;
    if (!same) return refuse('requirements_mismatch', 'The payment accepts other requirements than this route offers; pay against the current challenge.');
    return { ok: true, payment: { version: 2, payload: decoded as PaymentPayload, requirements: offer.v2, authorization } };
  }
  return { ok: true, payment: { version: 1, payload: decoded as PaymentPayloadV1, requirements: offer.v1, authorization } };
}
