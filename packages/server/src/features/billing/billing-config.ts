import { z } from 'zod';

const optionalUrl = z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).optional();

/**
 * Billing settings. Without `STRIPE_SECRET_KEY` the checkout route answers 503 and nothing else
 * changes; `SVC_STRIPE_API_BASE` points the stripe client at another server (stripe-mock, or the
 * tests' fake), never needed in production.
 */
export const billingEnvShape = {
  STRIPE_SECRET_KEY: z.string().min(8, 'must be a Stripe secret key (sk_...)').optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(8, 'must be a webhook signing secret (whsec_...)').optional(),
  SVC_STRIPE_API_BASE: optionalUrl,
  SVC_BILLING_SUCCESS_URL: optionalUrl,
  SVC_BILLING_CANCEL_URL: optionalUrl,
  SVC_CREDIT_HOLD_TTL_SECONDS: z.coerce.number().int().min(5).max(86_400).default(900),
};

export interface BillingConfig {
  stripeSecretKey: string | undefined;
  stripeWebhookSecret: string | undefined;
  stripeApiBase: string | undefined;
  /** Where Checkout sends the buyer after paying or giving up; default: the service root. */
  successUrl: string | undefined;
  cancelUrl: string | undefined;
  /** A hold older than this is released by housekeeping (its server died mid-call). */
  holdTtlSeconds: number;
}

export function toBillingConfig(env: z.output<z.ZodObject<typeof billingEnvShape>>): BillingConfig {
  return {
    stripeSecretKey: env.STRIPE_SECRET_KEY,
    stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET,
    stripeApiBase: env.SVC_STRIPE_API_BASE,
    successUrl: env.SVC_BILLING_SUCCESS_URL,
    cancelUrl: env.SVC_BILLING_CANCEL_URL,
    holdTtlSeconds: env.SVC_CREDIT_HOLD_TTL_SECONDS,
  };
}
