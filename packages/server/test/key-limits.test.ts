import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { QueryTypes } from 'sequelize';
import { tokenReservation } from '@svc/schemas';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';
import { SLOT_SETTLE_MS } from '../src/http/key-limit-slots.ts';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { signInAgent } from '@svc/testing/identity';
import { run } from '@svc/testing/run';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { calculateJob, postJob } from './helpers/jobs.ts';

/**
 * Limits per key on one server (the edges, the 422s, PATCH, usage and credit caps); the
 * two-replica proofs are in key-limits-replicas.test.ts.
 */
const CLI_BIN = fileURLToPath(new URL('../../cli/src/bin.ts', import.meta.url));
let fake: FakeUpstream;
let svc: TestServer;

test.before(async () => {
  fake = await startFakeOpenAiUpstream();
  svc = await startTestServer({
    env: { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_API_KEY: 'sk-fake', SVC_UPSTREAM_MODELS: 'answer-a,refuse-a,pause-a' },
  });
});
test.after.always(async () => {
  await svc?.close();
  await fake?.close();
});

const sequelize = () => svc.server.database.sequelize;

/** Waits out the end of a minute window so a burst (of at most `burstMs`) is counted in one window. */
async function inOneMinuteWindow(burstMs = 10_000): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 60_000 - burstMs) await sleep(60_000 - into + 100);
}

/** An agent tests share where its keys do not matter: each sign-in registers a client, 20 a minute from one address. */
let sharedAgent: ReturnType<typeof signInAgent> | undefined;

async function keyWith(limits: Record<string, number | null>, options: { shared?: boolean } = {}) {
  const agent = await (options.shared ? (sharedAgent ??= signInAgent(svc)) : signInAgent(svc));
  const created = await agent.client.credentials.create({
    body: { name: 'limited', scopes: ['models:read', 'inference:invoke', 'billing:read', 'billing:write'], limits },
  });
  return { agent, credentialId: created.credential.credential_id, secret: created.secret, credential: created.credential };
}

const models = (secret: string, headers: Record<string, string> = {}) =>
  fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${secret}`, ...headers } });

const chat = (secret: string, model = 'answer-a', path = '/v1/chat/completions', headers: Record<string, string> = {}) =>
  fetch(`${svc.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'count the words of this prompt' }] }),
  });

const createRaw = async (limits: unknown) => {
  const agent = await (sharedAgent ??= signInAgent(svc));
  return fetch(`${svc.baseUrl}/v1/developer/credentials`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.session.accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'k', scopes: ['models:read'], limits }),
  });
};

test('bad limit values are 422 naming the field, on create and on PATCH', async (t) => {
  const bad: Array<[string, unknown]> = [
    ['requests_per_minute', -1],
    ['requests_per_minute', 0],
    ['concurrent_requests', 0],
    ['tokens_per_minute', 1.5],
    ['requests_per_minute', 1_000_001],
    ['credits_per_day', -1],
    ['credits_per_month', 1_000_000_001],
    ['credits_per_day', '5'],
  ];
  const { agent, credentialId } = await keyWith({});
  for (const [field, value] of bad) {
    const created = await createRaw({ [field]: value });
    t.is(created.status, 422, `${field}=${value}`);
    const body = (await created.json()) as { code: string; detail: Array<{ loc: unknown[] }> };
    t.is(body.code, 'validation_failed');
    t.deepEqual(body.detail[0]!.loc, ['body', 'limits', field]);
    const patched = await fetch(`${svc.baseUrl}/v1/developer/credentials/${credentialId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${agent.session.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ limits: { [field]: value } }),
    });
    t.is(patched.status, 422);
    t.deepEqual(((await patched.json()) as { detail: Array<{ loc: unknown[] }> }).detail[0]!.loc, ['body', 'limits', field]);
  }
  // The edges themselves are accepted: the maximum, 1 for rates, 0 for credit caps.
  t.is((await createRaw({ requests_per_minute: 1_000_000, concurrent_requests: 1, credits_per_day: 0, credits_per_month: 0 })).status, 201);
  t.is((await createRaw({ unknown_limit: 1 })).status, 422);
});

test('a limit of N requests a minute lets N through and refuses N+1, with OpenAI headers', async (t) => {
  await inOneMinuteWindow();
  const { secret } = await keyWith({ requests_per_minute: 3 });
  for (let index = 0; index < 3; index++) {
    const response = await models(secret);
    t.is(response.status, 200);
    t.is(response.headers.get('x-ratelimit-limit-requests'), '3');
    t.is(response.headers.get('x-ratelimit-remaining-requests'), String(2 - index));
    t.regex(response.headers.get('x-ratelimit-reset-requests')!, /^(\d+(\.\d+)?s|\d+ms)$/);
  }
  const refused = await models(secret);
  t.is(refused.status, 429);
  t.is(((await refused.json()) as { code: string }).code, 'key_limit_exceeded:requests_per_minute');
  t.is(refused.headers.get('x-ratelimit-remaining-requests'), '0');
  t.true(Number(refused.headers.get('retry-after')) >= 1 && Number(refused.headers.get('retry-after')) <= 60);
  t.truthy(refused.headers.get('retry-after-ms'));
});

test('a busy key is counted in chunks of slots (while its minute has 256 or more left): of 1,200 requests exactly 1,100 pass, the minute ends at 1,100 with none lent, and a lowered limit holds at once', async (t) => {
  t.timeout(120_000);
  await inOneMinuteWindow(20_000);
  const { agent, credentialId, secret } = await keyWith({ requests_per_minute: 1_100 }, { shared: true });
  const row = async () => {
    const [counter] = await sequelize().query<{ hits: string; amount: string }>(
      `SELECT hits, amount FROM svc_rate_counters WHERE bucket = :bucket AND window_start = date_trunc('minute', now())`,
      { replacements: { bucket: `limits:rpm:key:${credentialId}` }, type: QueryTypes.SELECT },
    );
    return { hits: Number(counter?.hits ?? 0), lent: Number(counter?.amount ?? 0) };
  };
  const statuses: number[] = [];
  let mostLent = 0;
  let bursting = true;
  const watching = (async () => {
    while (bursting) mostLent = Math.max(mostLent, (await row()).lent);
  })();
  for (let batch = 0; batch < 75; batch++) {
    const answers = await Promise.all(Array.from({ length: 16 }, () => models(secret)));
    for (const answer of answers) {
      statuses.push(answer.status);
      await answer.arrayBuffer();
    }
  }
  bursting = false;
  await watching;
  t.is(statuses.filter((status) => status === 200).length, 1_100);
  t.is(statuses.filter((status) => status === 429).length, 100);
  // Slots were lent (reserved ahead, then settled), and every one came back or was used.
  t.true(mostLent > 0, 'no chunk of slots was ever reserved');
  await waitUntil('every lent slot settled', async () => (await row()).lent === 0);
  t.deepEqual(await row(), { hits: 1_100, lent: 0 });

  // A key whose limit is lowered while this replica holds slots: its next request counts one by one.
  const second = await agent.client.credentials.create({ body: { name: 'lowered', scopes: ['models:read'], limits: { requests_per_minute: 2_000 } } });
  const [lowered, loweredSecret] = [second.credential.credential_id, second.secret];
  for (let index = 0; index < 40; index++) t.is((await models(loweredSecret)).status, 200);
  const patched = await fetch(`${svc.baseUrl}/v1/developer/credentials/${lowered}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${agent.session.accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ limits: { requests_per_minute: 30 } }),
  });
  t.is(patched.status, 200);
  const after = await models(loweredSecret);
  t.is(after.status, 429);
  t.is(after.headers.get('x-ratelimit-limit-requests'), '30');
});

test('a request refused while slots are lent waits for them to come back; slots never settled (a replica that died) only delay the refusal', async (t) => {
  t.timeout(60_000);
  await inOneMinuteWindow(20_000);
  const { credentialId, secret } = await keyWith({ requests_per_minute: 1_100 }, { shared: true });
  const bucket = `limits:rpm:key:${credentialId}`;
  const counter = async () => {
    const [row] = await sequelize().query<{ hits: string; amount: string }>(
      `SELECT hits, amount FROM svc_rate_counters WHERE bucket = :bucket AND window_start = date_trunc('minute', now())`,
      { replacements: { bucket }, type: QueryTypes.SELECT },
    );
    return { hits: Number(row?.hits ?? 0), lent: Number(row?.amount ?? 0) };
  };
  const setCounter = (hits: number, lent: number) =>
    sequelize().query(`UPDATE svc_rate_counters SET hits = :hits, amount = :lent WHERE bucket = :bucket AND window_start = date_trunc('minute', now())`, {
      replacements: { bucket, hits, lent },
    });
  t.is((await models(secret)).status, 200);
  // One request reserves no chunk (a key is busy from a few counts within a settle period); were one reserved, it settles within its period.
  await sleep(SLOT_SETTLE_MS * 3);
  await waitUntil('the reserved chunk settled', async () => (await counter()).lent === 0);
  t.is((await counter()).hits, 1);
  // Another replica holds 5 slots of a full minute and gives them back 30 ms later.
  await setCounter(1_100, 5);
  const settled = sleep(30).then(() => setCounter(1_095, 0));
  const waited = await models(secret);
  await settled;
  t.is(waited.status, 200);
  t.deepEqual(await counter(), { hits: 1_096, lent: 0 });
  // Slots that never come back: refused, after a few short waits.
  await setCounter(1_100, 5);
  const started = performance.now();
  const refused = await models(secret);
  t.is(refused.status, 429);
  t.true(performance.now() - started >= 150);
  t.is(((await refused.json()) as { code: string }).code, 'key_limit_exceeded:requests_per_minute');
});

test('an Idempotency-Key exempts only a true replay: the same key, route and body, on a route that stores its answer', async (t) => {
  await inOneMinuteWindow();
  const agent = await (sharedAgent ??= signInAgent(svc));
  const scopes = ['models:read', 'inference:invoke', 'jobs:write'] as const;
  const created = await agent.client.credentials.create({ body: { name: 'replays', scopes: [...scopes], limits: { requests_per_minute: 4 } } });
  const secret = created.secret;
  const job = (body: string, secretToUse = secret) => postJob(svc.baseUrl, secretToUse, body, { 'idempotency-key': 'one-call' });
  const first = await job(JSON.stringify(calculateJob(1)));
  t.is(first.status, 202, 'counted: 1');
  for (let attempt = 0; attempt < 5; attempt++) {
    const replayed = await job(JSON.stringify(calculateJob(1)));
    t.is(replayed.status, 202, 'a replay of the stored answer is not counted');
    t.is(replayed.headers.get('idempotent-replayed'), 'true');
  }
  const otherBody = await job(JSON.stringify(calculateJob(2)));
  t.is(otherBody.status, 409, 'counted: 2');
  t.is(((await otherBody.json()) as { code: string }).code, 'idempotency_conflict');
  await waitUntil('the 409 counted', async () => {
    const [row] = await sequelize().query<{ hits: string }>(
      `SELECT hits FROM svc_rate_counters WHERE bucket = :bucket AND window_start = date_trunc('minute', now())`,
      { replacements: { bucket: `limits:rpm:key:${created.credential.credential_id}` }, type: QueryTypes.SELECT },
    );
    return Number(row?.hits) === 2;
  });
  // Another route with the same key is a new request each time: 2 more fit, then 429.
  const chats = [];
  for (let attempt = 0; attempt < 4; attempt++) chats.push((await chat(secret, 'answer-a', '/v1/chat/completions', { 'idempotency-key': 'one-call' })).status);
  t.deepEqual(chats, [200, 200, 429, 429]);
  t.is((await models(secret, { 'idempotency-key': 'one-call' })).status, 429, 'a route that stores no answer counts it too');
  // Another key of the same agent gets the agent's stored answer, but as a request of its own: counted.
  const other = await agent.client.credentials.create({ body: { name: 'second', scopes: [...scopes], limits: { requests_per_minute: 1 } } });
  const replayedToOther = await job(JSON.stringify(calculateJob(1)), other.secret);
  t.is(replayedToOther.status, 202);
  t.is(replayedToOther.headers.get('idempotent-replayed'), 'true');
  t.is((await models(other.secret)).status, 429);
});

test('a credit-funded chat replayed under its Idempotency-Key is not counted again; another body under it is 409 and counted', async (t) => {
  await inOneMinuteWindow();
  const { agent, credentialId, secret } = await keyWith({ requests_per_minute: 3 });
  await sequelize().transaction((transaction) => grantCredits(sequelize(), transaction, agent.id, 10, `replay-grant-${agent.id}`));
  const counted = async () => {
    const [row] = await sequelize().query<{ hits: string }>(
      `SELECT hits FROM svc_rate_counters WHERE bucket = :bucket AND window_start = date_trunc('minute', now())`,
      { replacements: { bucket: `limits:rpm:key:${credentialId}` }, type: QueryTypes.SELECT },
    );
    return Number(row?.hits ?? 0);
  };
  const credit = (key: string, content = 'count the words of this prompt') =>
    fetch(`${svc.baseUrl}/v1/credits/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ model: 'answer-a', messages: [{ role: 'user', content }] }),
    });
  t.is((await credit('paid-1')).status, 200, 'counted: 1');
  for (let attempt = 0; attempt < 4; attempt++) {
    const replayed = await credit('paid-1');
    t.is(replayed.status, 200);
    t.is(replayed.headers.get('idempotent-replayed'), 'true');
  }
  const otherBody = await credit('paid-1', 'another question');
  t.is(otherBody.status, 409);
  // Counted as its answer closes: the body that told it from a replay came after the count.
  await waitUntil('the 409 counted', async () => (await counted()) === 2);
  t.is((await credit('paid-2')).status, 200, 'counted: 3');
  t.is((await credit('paid-3')).status, 429);
});

test('PATCH changes limits on the next request; null clears; only the owner or the operator may', async (t) => {
  await inOneMinuteWindow();
  const { agent, credentialId, secret, credential } = await keyWith({ requests_per_minute: 1 });
  t.deepEqual(credential.limits, {
    requests_per_minute: 1,
    concurrent_requests: null,
    tokens_per_minute: null,
    credits_per_day: null,
    credits_per_month: null,
  });
  t.is((await models(secret)).status, 200);
  t.is((await models(secret)).status, 429);
  const updated = await agent.client.credentials.update({
    params: { credential_id: credentialId },
    body: { limits: { requests_per_minute: 5, credits_per_day: 3 } },
  });
  t.is(updated.limits.requests_per_minute, 5);
  t.is(updated.limits.credits_per_day, 3);
  const next = await models(secret);
  t.is(next.status, 200);
  t.is(next.headers.get('x-ratelimit-limit-requests'), '5');
  const cleared = await agent.client.credentials.update({ params: { credential_id: credentialId }, body: { limits: { requests_per_minute: null } } });
  t.is(cleared.limits.requests_per_minute, null);
  t.is(cleared.limits.credits_per_day, 3, 'absent fields stay');
  const unlimited = await models(secret);
  t.is(unlimited.status, 200);
  t.is(unlimited.headers.get('x-ratelimit-limit-requests'), null);
  // Another agent cannot see the key; the operator can change any key; a developer key cannot PATCH.
  const stranger = await signInAgent(svc);
  const foreign = await stranger.client.credentials
    .update({ params: { credential_id: credentialId }, body: { limits: { requests_per_minute: 9 } } })
    .catch((error) => error);
  t.is(foreign.status, 404);
  t.is(
    (await svc.operator.credentials.update({ params: { credential_id: credentialId }, body: { limits: { requests_per_minute: 7 } } })).limits
      .requests_per_minute,
    7,
  );
  const byKey = await fetch(`${svc.baseUrl}/v1/developer/credentials/${credentialId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ limits: {} }),
  });
  t.is(byKey.status, 403);
});

test('a token limit refuses once the minute has used it, and inference answers carry the token headers', async (t) => {
  await inOneMinuteWindow();
  const { secret } = await keyWith({ tokens_per_minute: 10 });
  const first = await chat(secret);
  t.is(first.status, 200);
  t.is(first.headers.get('x-ratelimit-limit-tokens'), '10');
  t.is(first.headers.get('x-ratelimit-remaining-tokens'), '0', 'its estimate (over the limit: the minute had nothing counted) reserved it all');
  const used = ((await first.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
  t.true(used >= 10, `the fake reports ${used} tokens`);
  let refused: Response | undefined;
  await waitUntil('the token limit refuses', async () => (refused = await chat(secret)).status === 429);
  t.is(((await refused!.json()) as { code: string }).code, 'key_limit_exceeded:tokens_per_minute');
  t.is(refused!.headers.get('x-ratelimit-remaining-tokens'), '0');
});

test('a call reserves its token estimate before it runs: an estimate one past what the minute has left is 429, one that fits exactly runs', async (t) => {
  await inOneMinuteWindow();
  const limit = 1000;
  const { secret } = await keyWith({ tokens_per_minute: limit });
  const callWith = (maxTokens: number) =>
    fetch(`${svc.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: bodyWith(maxTokens),
    });
  const bodyWith = (maxTokens: number) =>
    JSON.stringify({ model: 'answer-a', messages: [{ role: 'user', content: 'count these words' }], max_tokens: maxTokens });
  // The estimate: max_tokens plus the body's bytes / 4 (tokenReservation in @svc/schemas).
  const estimate = (maxTokens: number) => maxTokens + Math.ceil(Buffer.byteLength(bodyWith(maxTokens)) / tokenReservation.bytesPerInputToken);
  const first = await callWith(5);
  t.is(first.status, 200);
  const used = ((await first.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
  await waitUntil(
    'the first call settled to its usage',
    async () => (await models(secret)).headers.get('x-ratelimit-remaining-tokens') === String(limit - used),
  );
  const left = limit - used;
  let maxTokens = left;
  while (estimate(maxTokens) > left) maxTokens--;
  t.is(estimate(maxTokens), left, 'a body whose estimate is exactly what is left');
  const onePast = await callWith(maxTokens + 1);
  t.is(onePast.status, 429);
  t.is(((await onePast.json()) as { code: string }).code, 'key_limit_exceeded:tokens_per_minute');
  const fits = await callWith(maxTokens);
  t.is(fits.status, 200);
  t.is(fits.headers.get('x-ratelimit-remaining-tokens'), '0', 'the reservation took all that was left');
});

test('an operation whose body bounds no output (embeddings) reserves only its input estimate', async (t) => {
  await inOneMinuteWindow();
  const { secret } = await keyWith({ tokens_per_minute: 200 });
  const embed = () =>
    fetch(`${svc.baseUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'a few words to embed' }),
    });
  // With the chat default of 1,024 output tokens reserved, only the first call of the minute would run.
  for (let call = 0; call < 3; call++) t.is((await embed()).status, 200);
});

test('calls in flight at once under one request id, which the caller chooses, each count their tokens', async (t) => {
  await inOneMinuteWindow();
  const { secret } = await keyWith({ tokens_per_minute: 100_000 });
  // pause-a holds each answer 300 ms, so the five are in flight together and end one by one.
  const answers = await Promise.all(Array.from({ length: 5 }, () => chat(secret, 'pause-a', undefined, { 'x-request-id': 'same-id-every-time' })));
  let used = 0;
  for (const answer of answers) {
    t.is(answer.status, 200);
    used += ((await answer.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
  }
  await waitUntil('all five calls counted', async () => {
    const remaining = Number((await models(secret)).headers.get('x-ratelimit-remaining-tokens'));
    return remaining === 100_000 - used;
  });
  t.pass();
});

test('usage per key and model: the route pages by cursor, and the CLI prints it', async (t) => {
  const { agent, credentialId, secret } = await keyWith({});
  t.is((await chat(secret)).status, 200);
  t.is((await chat(secret)).status, 200);
  t.not((await chat(secret, 'refuse-a')).status, 200);
  const params = { credential_id: credentialId };
  await waitUntil('both models in the usage', async () => (await agent.client.credentials.usage({ params, query: { limit: 10 } })).data.length === 2);
  const first = await agent.client.credentials.usage({ params, query: { limit: 1 } });
  t.true(first.has_more);
  const second = await agent.client.credentials.usage({ params, query: { limit: 1, cursor: first.next_cursor! } });
  t.false(second.has_more);
  const rows = [...first.data, ...second.data];
  const answer = rows.find((row) => row.model === 'answer-a')!;
  t.is(answer.requests, 2);
  t.true(answer.total_tokens > 0);
  t.is(rows.find((row) => row.model === 'refuse-a')!.requests, 1, 'a failed call counts');
  t.is(answer.day, new Date().toISOString().slice(0, 10));
  // The operator reads any key; a stranger gets 404.
  t.is((await svc.operator.credentials.usage({ params, query: { limit: 10 } })).data.length, 2);
  const stranger = await signInAgent(svc);
  t.is((await stranger.client.credentials.usage({ params, query: { limit: 10 } }).catch((error) => error)).status, 404);
  const cli = await run(process.execPath, [CLI_BIN, 'keys', 'usage', credentialId, '--json'], {
    cwd: process.cwd(),
    env: { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: agent.session.accessToken },
    timeoutMs: 30_000,
  });
  t.is(cli.code, 0, cli.stderr);
  const printed = JSON.parse(cli.stdout) as { data: Array<{ model: string; requests: number }> };
  t.deepEqual(printed.data.map((row) => row.model).sort(), ['answer-a', 'refuse-a']);
});

test('a credit cap of N a day lets N calls draw and refuses N+1 with 429; a failed call gives its share back', async (t) => {
  const { agent, credentialId, secret } = await keyWith({ credits_per_day: 2 });
  await sequelize().transaction((transaction) => grantCredits(sequelize(), transaction, agent.id, 10, `cap-grant-${agent.id}`));
  const credit = (key: string, model = 'answer-a') => chat(secret, model, '/v1/credits/chat/completions', { 'idempotency-key': key });
  t.not((await credit('fail-1', 'refuse-a')).status, 200, 'a failed call');
  t.is((await credit('call-1')).status, 200);
  t.is((await credit('call-2')).status, 200);
  const refused = await credit('call-3');
  t.is(refused.status, 429);
  t.is(((await refused.json()) as { code: string }).code, 'key_limit_exceeded:credits_per_day');
  t.true(Number(refused.headers.get('retry-after')) > 0);
  // Every key limit's refusal gives retry-after-ms too (docs/limits.md), the credit caps included:
  // the milliseconds until the UTC day ends, which Retry-After rounds up.
  const retryAfterMs = Number(refused.headers.get('retry-after-ms'));
  t.true(retryAfterMs > 0 && retryAfterMs <= 86_400_000, `retry-after-ms: ${refused.headers.get('retry-after-ms')}`);
  t.is(Number(refused.headers.get('retry-after')), Math.ceil(retryAfterMs / 1000));
  t.is((await credit('call-1')).headers.get('idempotent-replayed'), 'true', 'a replay draws nothing');
  const [balance] = await sequelize().query<{ spendable: string; reserved: string }>(
    'SELECT spendable, reserved FROM billing_accounts WHERE principal_id = :id',
    {
      replacements: { id: agent.id },
      type: QueryTypes.SELECT,
    },
  );
  t.deepEqual([Number(balance!.spendable), Number(balance!.reserved)], [8, 0]);
  const receipts = await sequelize().query<{ credential_id: string }>('SELECT credential_id FROM billing_receipts WHERE principal_id = :id', {
    replacements: { id: agent.id },
    type: QueryTypes.SELECT,
  });
  t.deepEqual(
    receipts.map((row) => row.credential_id),
    [credentialId, credentialId],
  );
  const usage = await agent.client.credentials.usage({ params: { credential_id: credentialId }, query: { limit: 10 } });
  t.is(usage.data.find((row) => row.model === 'answer-a')!.credits, 2);
});

test('defaults: per principal kind for bearer calls, and for each limit a key leaves unset', async (t) => {
  const defaults = await startTestServer({
    env: { SVC_LIMITS_AGENT: 'requests_per_minute=2', SVC_LIMITS_DEVELOPER_KEY: 'requests_per_minute=3, concurrent_requests=4' },
  });
  try {
    await inOneMinuteWindow();
    const agent = await signInAgent(defaults);
    const call = (token: string) => fetch(`${defaults.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
    const statuses = async (token: string, count: number) => {
      const seen: number[] = [];
      for (let index = 0; index < count; index++) seen.push((await call(token)).status);
      return seen;
    };
    // Signing in already made one scoped call with the bearer (whoami).
    t.deepEqual(await statuses(agent.session.accessToken, 2), [200, 429], 'the OAuth bearer: SVC_LIMITS_AGENT');
    const plain = await agent.client.credentials.create({ body: { name: 'default', scopes: ['models:read'] } });
    t.deepEqual(await statuses(plain.secret, 4), [200, 200, 200, 429], 'a key without its own: SVC_LIMITS_DEVELOPER_KEY');
    const own = await agent.client.credentials.create({ body: { name: 'own', scopes: ['models:read'], limits: { requests_per_minute: 5 } } });
    t.deepEqual(await statuses(own.secret, 6), [200, 200, 200, 200, 200, 429], 'its own limit wins');
    t.is(own.credential.limits.concurrent_requests, null, 'the answer shows only the key’s own limits');
    t.deepEqual(await statuses(defaults.operatorToken, 5), [200, 200, 200, 200, 200], 'the operator is never limited');
  } finally {
    await defaults.close();
  }
});
