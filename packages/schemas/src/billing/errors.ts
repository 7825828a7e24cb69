import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes billing and credits raises (docs/billing.md); the root merges them into `errorCodes`. */
export const billingErrors = {
  billing_not_configured: 503,
  billing_principal_not_allowed: 403,
  credits_exhausted: 402,
  webhook_signature_invalid: 400,
  processor_error: 502,
} as const satisfies ErrorCodeTable;

/** The error codes x402 pay-per-call raises (docs/billing.md); the root merges them into `errorCodes`. */
export const x402Errors = {
  x402_not_configured: 503,
  x402_payment_required: 402,
  x402_payment_refused: 402,
  x402_facilitator_error: 502,
} as const satisfies ErrorCodeTable;
