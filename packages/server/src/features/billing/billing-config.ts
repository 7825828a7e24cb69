import { z } from 'zod';
import { httpUrl, integer } from '../../env-values.ts';

/**
 * Stripe and credit holds. Without `STRIPE_SECRET_KEY` the checkout route answers 503 and nothing
 * else changes; `SVC_STRIPE_API_BASE` points the stripe client at another server (stripe-mock, or
 * the tests' fake), never needed in production.
 */
export const billingConfigFrom = z
  .object({
    STRIPE_SECRET_KEY: z.string().min(8, 'must be a Stripe secret key (sk_...)').optional(),
    STRIPE_WEBHOOK_SECRET: z.string().min(8, 'must be a webhook signing secret (whsec_...)').optional(),
    SVC_STRIPE_API_BASE: httpUrl.optional(),
    SVC_BILLING_SUCCESS_URL: httpUrl.optional(),
    SVC_BILLING_CANCEL_URL: httpUrl.optional(),
    SVC_CREDIT_HOLD_TTL_SECONDS: integer(5, 86_400, 'seconds').default(900),
  })
  .transform((env) => ({
    stripeSecretKey: env.STRIPE_SECRET_KEY,
    stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET,
    stripeApiBase: env.SVC_STRIPE_API_BASE,
    /** Where Checkout sends the buyer after paying or giving up; default: the service root. */
    successUrl: env.SVC_BILLING_SUCCESS_URL,
    cancelUrl: env.SVC_BILLING_CANCEL_URL,
    /** A hold older than this is released by housekeeping (its server died mid-call). */
    holdTtlSeconds: env.SVC_CREDIT_HOLD_TTL_SECONDS,
  }));

export type BillingConfig = z.output<typeof billingConfigFrom>;

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** billing-config.ts's settings, read by the feature list's billing line. */
    billing: BillingConfig;
  }
}
