import { registerHooks } from 'node:module';
import test from 'ava';
import { startTestServer } from '@svc/testing/test-server';

/**
 * A server without Stripe never loads the Stripe SDK (about 15 MiB resident, and tens of
 * milliseconds of compiling on the event loop), whatever anyone sends: the webhook route is
 * public, and it used to load the SDK before it checked that webhooks were configured. Which
 * modules this process resolves is watched with Node's module hooks; the second test shows the
 * watch sees the SDK when a configured server does load it. Serial: once loaded, it stays.
 */
const resolved = new Set<string>();
registerHooks({
  resolve(specifier, context, nextResolve) {
    resolved.add(specifier);
    return nextResolve(specifier, context);
  },
});

/** A delivery whose signature no secret matches. */
const deliverBadlySigned = (baseUrl: string) =>
  fetch(`${baseUrl}/webhooks/processor`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
    body: '{"id":"evt_1","object":"event","type":"checkout.session.completed"}',
  });

test.serial('without Stripe, the webhook and checkout answer 503 billing_not_configured and the SDK is never loaded', async (t) => {
  const bare = await startTestServer();
  try {
    const hook = await deliverBadlySigned(bare.baseUrl);
    t.is(hook.status, 503);
    t.is((await hook.json()).code, 'billing_not_configured');
    const checkout = await fetch(`${bare.baseUrl}/v1/billing/processor/checkout-session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bare.operatorToken}`, 'content-type': 'application/json' },
      body: '{"pack_code":"starter_1000"}',
    });
    t.is(checkout.status, 503);
    t.false(resolved.has('stripe'), 'the Stripe SDK was loaded');
  } finally {
    await bare.close();
  }
});

test.serial('with a webhook secret, a delivery loads the SDK to verify its signature (400 on a bad one)', async (t) => {
  const configured = await startTestServer({ env: { STRIPE_WEBHOOK_SECRET: 'whsec_for_the_unconfigured_test' } });
  try {
    const hook = await deliverBadlySigned(configured.baseUrl);
    t.is(hook.status, 400);
    t.is((await hook.json()).code, 'webhook_signature_invalid');
    t.true(resolved.has('stripe'));
  } finally {
    await configured.close();
  }
});
