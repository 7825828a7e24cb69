import test from 'ava';
import { QueryTypes } from 'sequelize';
import { billingLimits } from '@svc/schemas';
import { balanceOf, commitHold, grantCredits, holdCredits, releaseExpiredHolds, releaseHold } from '../src/features/billing/credit-ledger.ts';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * A credit hold lives as long as its call: renewed while the call runs (every third of a 5 s TTL
 * here), so the sweep never releases a call still streaming; and a hold that was released anyway
 * (its replica could not renew it) is still charged when its call commits, or the commit says
 * plainly that it was not.
 */
const HOLD_TTL_SECONDS = 5;
/** The upstream's pause inside each streamed answer: well past the hold's TTL. */
const PAUSE_MS = 9000;
let fake: FakeUpstream;
let svc: TestServer;

test.before(async () => {
  fake = await startFakeOpenAiUpstream({ pauseMs: PAUSE_MS });
  svc = await startTestServer({
    env: {
      SVC_CREDIT_HOLD_TTL_SECONDS: String(HOLD_TTL_SECONDS),
      SVC_UPSTREAM_BASE_URL: fake.baseUrl,
      SVC_UPSTREAM_API_KEY: 'sk-fake',
      SVC_UPSTREAM_MODELS: 'pause-a',
    },
  });
});
test.after.always(async () => {
  await svc?.close();
  await fake?.close();
});

const sequelize = () => svc.server.database.sequelize;

async function customer(credits: number) {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['billing:read', 'billing:write', 'inference:invoke']);
  if (credits > 0) await sequelize().transaction((transaction) => grantCredits(sequelize(), transaction, agent.id, credits, `test-grant-${agent.id}`));
  return { id: agent.id, token: key.secret };
}

const receiptsOf = async (principalId: string) =>
  (
    await sequelize().query<{ count: string }>('SELECT count(*) AS count FROM billing_receipts WHERE principal_id = :id', {
      replacements: { id: principalId },
      type: QueryTypes.SELECT,
    })
  )[0]!.count;

test('a streamed credit call that outlives its hold TTL keeps its hold through the sweep, and is charged once with a receipt', async (t) => {
  const { id, token } = await customer(3);
  const started = Date.now();
  const call = fetch(`${svc.baseUrl}/v1/credits/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'long-stream' },
    body: JSON.stringify({ model: 'pause-a', stream: true, messages: [{ role: 'user', content: 'a long answer please' }] }),
  });
  // Past the TTL and a second more, while the upstream still pauses: the sweep finds nothing to release.
  await new Promise((resolve) => setTimeout(resolve, (HOLD_TTL_SECONDS + 1.5) * 1000));
  t.true(Date.now() - started < PAUSE_MS, 'the call is still running');
  t.is(await releaseExpiredHolds(sequelize()), 0);
  const response = await call;
  t.is(response.status, 200);
  const text = await response.text();
  t.true(text.trimEnd().endsWith('data: [DONE]'));
  t.deepEqual(await balanceOf(sequelize(), id), { spendable: 3 - billingLimits.creditsPerChatCall, reserved: 0 });
  t.is(await receiptsOf(id), '1');
});

test('a hold released while its call ran is charged when the call commits; with no credit left the commit says it was not charged', async (t) => {
  const { id } = await customer(1);
  const caps = { subject: `principal:test:${id}`, perDay: 5 };
  const hold = await holdCredits(sequelize(), { principalId: id, idempotencyKey: 'swept', fingerprint: 'f', credits: 1, ttlSeconds: 60, caps });
  if (hold.kind !== 'held') return t.fail(hold.kind);
  t.true(await releaseHold(sequelize(), hold.holdId), 'the sweep released it');
  const draws = () =>
    sequelize().query<{ credits: string }>('SELECT credits FROM svc_limit_credit_draws WHERE subject = :subject', {
      replacements: { subject: caps.subject },
      type: QueryTypes.SELECT,
    });
  t.is((await draws())[0]!.credits, '0');
  const facts = { operation: 'chat', model: 'pause-a', requestId: 'req-swept', usage: {} };
  t.is(await commitHold(sequelize(), hold.holdId, { answer: 1 }, facts), 'committed');
  t.deepEqual(await balanceOf(sequelize(), id), { spendable: 0, reserved: 0 });
  t.is(await receiptsOf(id), '1');
  t.is((await draws())[0]!.credits, '1', 'the day draws the credit again');
  t.is(await commitHold(sequelize(), hold.holdId, { answer: 1 }, facts), 'not_held', 'committed once');

  // Spent elsewhere meanwhile: nothing to charge, nothing written, and the commit says so.
  const poor = await customer(1);
  const second = await holdCredits(sequelize(), { principalId: poor.id, idempotencyKey: 'swept-2', fingerprint: 'f', credits: 1, ttlSeconds: 60 });
  if (second.kind !== 'held') return t.fail(second.kind);
  await releaseHold(sequelize(), second.holdId);
  const spent = await holdCredits(sequelize(), { principalId: poor.id, idempotencyKey: 'other', fingerprint: 'f', credits: 1, ttlSeconds: 60 });
  t.is(spent.kind, 'held');
  t.is(await commitHold(sequelize(), second.holdId, { answer: 2 }, facts), 'not_charged');
  t.deepEqual(await balanceOf(sequelize(), poor.id), { spendable: 0, reserved: 1 });
  t.is(await receiptsOf(poor.id), '0');
});
