import Stripe from 'stripe';
import type { BillingConfig } from './billing-config.ts';

/**
 * The stripe client the configuration asks for, or undefined without a secret key.
 * `SVC_STRIPE_API_BASE` sends its requests to another server (stripe-mock, a test fake) with the
 * same wire format; retries stay on so a dropped connection is retried with the same idempotency key.
 */
export function createStripeClient(config: BillingConfig): Stripe | undefined {
  if (!config.stripeSecretKey) return undefined;
  const base = config.stripeApiBase ? new URL(config.stripeApiBase) : undefined;
  return new Stripe(config.stripeSecretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    appInfo: { name: 'svc' },
    ...(base ? { host: base.hostname, port: base.port || (base.protocol === 'https:' ? 443 : 80), protocol: base.protocol.replace(':', '') as 'http' | 'https' } : {}),
  });
}

/** Webhook verification needs no API key, only the signing secret. */
export function webhookVerifier(): Stripe['webhooks'] {
  return Stripe.webhooks;
}
