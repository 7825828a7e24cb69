import type Stripe from 'stripe';
import type { BillingConfig } from './billing-config.ts';

/**
 * The Stripe SDK, loaded by the first checkout or webhook rather than at boot: it is about
 * 15 MiB of resident memory (measured: importing it), which most servers, never configured for
 * Stripe, should not hold.
 */
let sdk: Promise<typeof Stripe> | undefined;
const loadStripe = () => (sdk ??= import('stripe').then((module) => module.default));

/**
 * The stripe client the configuration asks for (made on first use), or undefined without a
 * secret key. `SVC_STRIPE_API_BASE` sends its requests to another server (stripe-mock, a test
 * fake) with the same wire format; retries stay on so a dropped connection is retried with the
 * same idempotency key.
 */
export function createStripeClient(config: BillingConfig): (() => Promise<Stripe>) | undefined {
  const key = config.stripeSecretKey;
  if (!key) return undefined;
  const base = config.stripeApiBase ? new URL(config.stripeApiBase) : undefined;
  let client: Promise<Stripe> | undefined;
  return () =>
    (client ??= loadStripe().then(
      (StripeSdk) =>
        new StripeSdk(key, {
          maxNetworkRetries: 2,
          timeout: 20_000,
          appInfo: { name: 'svc' },
          ...(base
            ? { host: base.hostname, port: base.port || (base.protocol === 'https:' ? 443 : 80), protocol: base.protocol.replace(':', '') as 'http' | 'https' }
            : {}),
        }),
    ));
}

/** Webhook verification needs no API key, only the signing secret. */
export async function webhookVerifier(): Promise<Stripe['webhooks']> {
  return (await loadStripe()).webhooks;
}
