import test from 'ava';
import { grantCredits } from '@svc/testing/server-internals';
import { startFakeStripe, type FakeStripe } from '@svc/testing/fake-stripe';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

let stripe: FakeStripe;
let svc: TestServer;
let env: Record<string, string>;

test.before(async () => {
  stripe = await startFakeStripe();
  svc = await startTestServer({ env: { STRIPE_SECRET_KEY: 'sk_test_cli', STRIPE_WEBHOOK_SECRET: 'whsec_cli_tests_only', SVC_STRIPE_API_BASE: stripe.url } });
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['billing:read', 'billing:write', 'inference:invoke']);
  const sequelize = svc.server.database.sequelize;
  await sequelize.transaction((transaction) => grantCredits(sequelize, transaction, agent.id, 3, 'cli-test-grant'));
  env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: key.secret };
  // Two paid calls through the client helper: a key generated per call, never charged twice.
  const client = svc.client({ token: key.secret, retry: 2 });
  await client.credits.chat.completions.create({ messages: [{ role: 'user', content: 'What is svc?' }] });
  await client.credits.chat.completions.create({ messages: [{ role: 'user', content: 'How do I post?' }] }, { idempotencyKey: 'cli-known-key' });
  await client.credits.chat.completions.create({ messages: [{ role: 'user', content: 'How do I post?' }] }, { idempotencyKey: 'cli-known-key' });
});
test.after.always(async () => {
  await svc?.close();
  await stripe?.close();
});

test('svc billing balance shows credits and packs; --json the document', async (t) => {
  const run = await runCli(['billing', 'balance'], { env });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /^spendable 1\nreserved {2}0/);
  t.regex(run.stdout, /starter_1000\s+1000\s+5\.00 USD/);
  const json = JSON.parse((await runCli(['--json', 'billing', 'balance'], { env })).stdout);
  t.like(json, { spendable: 1, reserved: 0 });
});

test('svc billing buy prints the checkout URL; an unknown pack is a usage error', async (t) => {
  const run = await runCli(['billing', 'buy', 'builder_5000'], { env });
  t.is(run.code, 0, run.stderr);
  // The session's hosted page: the fake Stripe serves it itself (Stripe's is on checkout.stripe.com).
  t.true(run.stdout.trim().startsWith(`${stripe.url}/c/pay/cs_test_`), run.stdout);
  t.regex(run.stderr, /builder_5000 \(5000 credits\)/);
  const bad = await runCli(['billing', 'buy', 'mega'], { env });
  t.is(bad.code, 2);
});

test('svc billing usage lists receipts; --csv prints CSV; --all --json prints JSON lines', async (t) => {
  const page = await runCli(['billing', 'usage'], { env });
  t.is(page.code, 0, page.stderr);
  t.regex(page.stdout, /^CREATED\s+RECEIPT/);
  t.is(page.stdout.trim().split('\n').length, 3, 'two calls, two receipts (the replay charged nothing)');
  const csv = await runCli(['billing', 'usage', '--csv'], { env });
  const lines = csv.stdout.trim().split('\r\n');
  t.is(lines[0], 'receipt_id,created_at,credits,operation,model,request_id,idempotency_key,prompt_tokens,completion_tokens,total_tokens,credential_id');
  t.is(lines.length, 3);
  const all = await runCli(['--json', 'billing', 'usage', '--all', '--limit', '1'], { env });
  const items = all.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.is(items.length, 1);
  t.is(items[0].operation, 'chat');
  t.is((await runCli(['billing', 'usage', '--limit', '101'], { env })).code, 2);
});
