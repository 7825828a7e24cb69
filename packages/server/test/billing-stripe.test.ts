import { randomBytes } from 'node:crypto';
import test from 'ava';
import Stripe from 'stripe';
import { startFakeStripe, type FakeStripe } from '@svc/testing/fake-stripe';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString('hex')}`;
let stripe: FakeStripe;
let svc: TestServer;

test.before(async () => {
  stripe = await startFakeStripe();
  svc = await startTestServer({
    env: {
      STRIPE_SECRET_KEY: 'sk_test_fake_for_svc',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      SVC_STRIPE_API_BASE: stripe.url,
      SVC_DEMO_TOKEN: 'demo-token-for-billing',
      SVC_DEMO_SCOPES: 'billing:read billing:write inference:invoke',
    },
  });
});
test.after.always(async () => {
  await svc?.close();
  await stripe?.close();
});

/** A buyer: an OAuth agent with a developer key holding the billing scopes. */
async function buyer() {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['billing:read', 'billing:write', 'inference:invoke']);
  return { id: agent.id, token: key.secret, client: svc.client({ token: key.secret }) };
}

const checkout = (token: string, body: unknown, idempotencyKey?: string) =>
  fetch(`${svc.baseUrl}/v1/billing/processor/checkout-session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    body: JSON.stringify(body),
  });

/** Delivers an event as Stripe does: JSON body, `Stripe-Signature` made by the real stripe package. */
function deliver(event: Record<string, unknown>, options: { secret?: string; timestamp?: number } = {}) {
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? WEBHOOK_SECRET,
    ...(options.timestamp !== undefined ? { timestamp: options.timestamp } : {}),
  });
  return fetch(`${svc.baseUrl}/webhooks/processor`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    body: payload,
  });
}

const eventId = () => `evt_${randomBytes(10).toString('hex')}`;
const sessionEvent = (type: string, session: { id: string; metadata?: Record<string, string> }, paymentStatus: string, intent: string) => ({
  id: eventId(),
  object: 'event',
  type,
  api_version: '2026-01-01',
  created: Math.floor(Date.now() / 1000),
  livemode: false,
  data: {
    object: {
      id: session.id,
      object: 'checkout.session',
      payment_status: paymentStatus,
      status: 'complete',
      metadata: session.metadata ?? {},
      payment_intent: intent,
      mode: 'payment',
    },
  },
});

test('checkout creates a one-time session bound to the principal and pack; the same key answers it again', async (t) => {
  const { id, token } = await buyer();
  const key = `buy-${randomBytes(6).toString('hex')}`;
  const first = await checkout(token, { pack_code: 'starter_1000' }, key);
  t.is(first.status, 201);
  const session = await first.json();
  t.regex(session.session_id, /^cs_test_/);
  t.is(session.url, `${stripe.url}/c/pay/${session.session_id}`);
  t.like(session, { pack_code: 'starter_1000', credits: 1000, amount: 500, currency: 'usd', replayed: false });
  const sent = stripe.requests.find((request) => request.idempotencyKey?.endsWith(key))!;
  t.is(sent.form.mode, 'payment');
  t.is(sent.form['metadata[svc_principal_id]'], id);
  t.is(sent.form['metadata[svc_pack_code]'], 'starter_1000');
  t.is(sent.form['line_items[0][price_data][unit_amount]'], '500');
  t.is(sent.authorization, 'Bearer sk_test_fake_for_svc');
  t.is(sent.idempotencyKey, `svc-checkout:${id}:${key}`);
  const again = await checkout(token, { pack_code: 'starter_1000' }, key);
  t.is(again.status, 200);
  t.like(await again.json(), { session_id: session.session_id, replayed: true });
  const other = await checkout(token, { pack_code: 'builder_5000' }, key);
  t.is(other.status, 409);
  t.is((await other.json()).code, 'idempotency_conflict');
  const unknownPack = await checkout(token, { pack_code: 'mega_pack' });
  t.is(unknownPack.status, 422);
});

test('a processor failure is a 502 with a stable code; the shared demo principal cannot buy', async (t) => {
  const { token } = await buyer();
  // stripe-node retries a 500 twice with the same idempotency key; all three tries fail here.
  const key = `fail-${randomBytes(4).toString('hex')}`;
  stripe.failFor(key, 500, 3);
  const failed = await checkout(token, { pack_code: 'builder_5000' }, key);
  t.is(failed.status, 502);
  t.is((await failed.json()).code, 'processor_error');
  const demo = await checkout('demo-token-for-billing', { pack_code: 'starter_1000' });
  t.is(demo.status, 403);
});

test('a paid checkout grants once, whatever the number and order of deliveries', async (t) => {
  const { token, client } = await buyer();
  const session = await (await checkout(token, { pack_code: 'starter_1000' })).json();
  const intent = `pi_${randomBytes(8).toString('hex')}`;
  const unpaid = sessionEvent('checkout.session.completed', { id: session.session_id }, 'unpaid', intent);
  t.is((await deliver(unpaid)).status, 200);
  t.is((await client.billing.balance()).spendable, 0, 'an unpaid completion grants nothing');
  const succeeded = sessionEvent('checkout.session.async_payment_succeeded', { id: session.session_id }, 'paid', intent);
  const paid = sessionEvent('checkout.session.completed', { id: session.session_id }, 'paid', intent);
  const answers = await Promise.all([deliver(succeeded), deliver(paid), deliver(succeeded), deliver(paid)]);
  t.deepEqual(
    answers.map((answer) => answer.status),
    [200, 200, 200, 200],
  );
  const bodies = await Promise.all(answers.map((answer) => answer.json()));
  t.is(bodies.filter((body) => body.duplicate).length, 2, 'each event id is processed once');
  const balance = await client.billing.balance();
  t.is(balance.spendable, 1000);
  t.is(balance.reserved, 0);
  t.deepEqual(
    balance.packs.map((pack) => pack.pack_code),
    ['starter_1000', 'builder_5000'],
  );
});

test('bad, foreign and stale signatures are refused with 400 and record nothing', async (t) => {
  const { token, client } = await buyer();
  const session = await (await checkout(token, { pack_code: 'starter_1000' })).json();
  const event = sessionEvent('checkout.session.completed', { id: session.session_id }, 'paid', 'pi_x');
  const foreign = await deliver(event, { secret: 'whsec_not_ours_at_all' });
  t.is(foreign.status, 400);
  t.is((await foreign.json()).code, 'webhook_signature_invalid');
  const stale = await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
  t.is(stale.status, 400);
  t.regex((await stale.json()).error, /tolerance|timestamp/i);
  const unsigned = await fetch(`${svc.baseUrl}/webhooks/processor`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  t.is(unsigned.status, 400);
  t.is((await client.billing.balance()).spendable, 0);
  // The same event, properly signed, still counts: nothing was recorded by the refusals.
  t.false((await (await deliver(event)).json()).duplicate);
  t.is((await client.billing.balance()).spendable, 1000);
});

test('charge.refunded takes back the refunded share of the grant, never more than is unspent', async (t) => {
  const { token, client } = await buyer();
  const session = await (await checkout(token, { pack_code: 'starter_1000' })).json();
  const intent = `pi_${randomBytes(8).toString('hex')}`;
  await deliver(sessionEvent('checkout.session.completed', { id: session.session_id }, 'paid', intent));
  const refund = (amountRefunded: number) => ({
    id: eventId(),
    object: 'event',
    type: 'charge.refunded',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    data: {
      object: { id: `ch_${intent}`, object: 'charge', amount: 500, amount_refunded: amountRefunded, refunded: amountRefunded === 500, payment_intent: intent },
    },
  });
  const partial = await deliver(refund(100));
  t.is(partial.status, 200, await partial.clone().text());
  t.is((await client.billing.balance()).spendable, 800, 'a fifth refunded takes back 200 credits');
  const full = refund(500);
  await deliver(full);
  await deliver(full);
  t.is((await client.billing.balance()).spendable, 0, 'the rest goes with the full refund, once');
});

test('unknown event types answer 200 and change nothing; billing is 503 without Stripe', async (t) => {
  const answer = await deliver({ id: eventId(), object: 'event', type: 'customer.created', data: { object: { id: 'cus_1', object: 'customer' } } });
  t.is(answer.status, 200);
  const bare = await startTestServer();
  try {
    const response = await fetch(`${bare.baseUrl}/v1/billing/processor/checkout-session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bare.operatorToken}`, 'content-type': 'application/json' },
      body: '{"pack_code":"starter_1000"}',
    });
    t.is(response.status, 503);
    t.is((await response.json()).code, 'billing_not_configured');
    const hook = await fetch(`${bare.baseUrl}/webhooks/processor`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    t.is(hook.status, 503);
    t.is((await bare.operator.billing.balance()).spendable, 0);
  } finally {
    await bare.close();
  }
});
