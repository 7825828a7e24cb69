import test from 'ava';
import { QueryTypes } from 'sequelize';
import { sweepRetention } from '../src/features/blackboard/service.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * Small caps so every window's edge is cheap to reach. The address comes from X-Forwarded-For
 * (trusted here) so the per-address window can be isolated from the others.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({
    env: {
      SVC_TRUST_PROXY: 'true',
      SVC_BLACKBOARD_IP_PUTS_PER_HOUR: '5',
      SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: '3',
      SVC_BLACKBOARD_CHANNEL_BYTES_PER_HOUR: '1000',
      SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR: '4',
      SVC_BLACKBOARD_PRINCIPAL_BYTES_PER_HOUR: '3000',
      SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR: '100000',
      SVC_BLACKBOARD_RETENTION_ROWS: '6',
      SVC_BLACKBOARD_CHANNEL_WINDOW_ROWS: '4',
    },
  });
});
test.after.always(async () => {
  await svc?.close();
});

let counter = 0;
/** A put from its own address and bearer unless told otherwise, so only the window under test fills. */
async function put(options: { key?: string; bytes?: number; ip?: string; bearer?: string; value?: Record<string, unknown>; idempotency_key?: string }) {
  counter += 1;
  const value =
    options.value ?? (options.bytes !== undefined ? { text: 't'.repeat(options.bytes - JSON.stringify({ text: '' }).length) } : { text: `post ${counter}` });
  const response = await fetch(`${svc.apiUrl}/api/v1/blackboard/put`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-forwarded-for': options.ip ?? `10.1.${Math.floor(counter / 250)}.${counter % 250}`,
      authorization: `Bearer ${options.bearer ?? `bearer-${counter}`}`,
    },
    body: JSON.stringify({ key: options.key ?? `adm:${counter}`, value, ...(options.idempotency_key ? { idempotency_key: options.idempotency_key } : {}) }),
  });
  return { status: response.status, body: await response.json(), retryAfter: response.headers.get('retry-after') };
}

function assertRefused(t: import('ava').ExecutionContext, answer: Awaited<ReturnType<typeof put>>, code: string) {
  t.is(answer.status, 429, JSON.stringify(answer.body));
  t.is(answer.body.code, code);
  t.regex(answer.retryAfter ?? '', /^\d+$/);
  const seconds = Number(answer.retryAfter);
  t.true(seconds >= 1 && seconds <= 3600);
  t.is(answer.body.retry_after_seconds, seconds);
}

test.serial('per address: the 5th put passes, the 6th is refused, and the refusal counted nowhere else', async (t) => {
  for (let index = 0; index < 5; index++) t.is((await put({ ip: '10.9.9.9', bearer: index === 0 ? 'addr-owner' : undefined })).status, 201);
  assertRefused(t, await put({ ip: '10.9.9.9', bearer: 'addr-victim', key: 'adm:addr' }), 'blackboard_admission:ip_puts');
  // All or nothing: the refused put did not count for its principal or channel.
  for (let index = 0; index < 4; index++) t.is((await put({ bearer: 'addr-victim', key: index < 3 ? 'adm:addr' : 'adm:addr2' })).status, 201);
});

test.serial('per channel key: 3 posts pass, the 4th is refused; bytes cap at 1000 exactly', async (t) => {
  for (let index = 0; index < 3; index++) t.is((await put({ key: 'adm:chan' })).status, 201);
  assertRefused(t, await put({ key: 'adm:chan' }), 'blackboard_admission:channel_posts');
  t.is((await put({ key: 'adm:chan-bytes', bytes: 600 })).status, 201);
  t.is((await put({ key: 'adm:chan-bytes', bytes: 400 })).status, 201);
  assertRefused(t, await put({ key: 'adm:chan-bytes', bytes: 11 }), 'blackboard_admission:channel_bytes');
});

test.serial('per principal: 4 posts pass, the 5th is refused; bytes cap at 3000 exactly', async (t) => {
  for (let index = 0; index < 4; index++) t.is((await put({ bearer: 'principal-p' })).status, 201);
  assertRefused(t, await put({ bearer: 'principal-p' }), 'blackboard_admission:principal_posts');
  for (let index = 0; index < 3; index++) t.is((await put({ bearer: 'principal-q', bytes: 1000 })).status, 201);
  assertRefused(t, await put({ bearer: 'principal-q', bytes: 11 }), 'blackboard_admission:principal_bytes');
});

test.serial('a replay consumes no admission but still meets the per-address limiter', async (t) => {
  const first = await put({ bearer: 'replayer', key: 'adm:replay', idempotency_key: 'r1', value: { text: 'same' } });
  t.is(first.status, 201);
  for (let index = 0; index < 6; index++) {
    const again = await put({ bearer: 'replayer', key: 'adm:replay', idempotency_key: 'r1', value: { text: 'same' } });
    t.is(again.status, 200);
    t.true(again.body.deduplicated);
  }
  // Channel (3) and principal (4) windows saw one post only.
  t.is((await put({ bearer: 'replayer', key: 'adm:replay' })).status, 201);
  t.is((await put({ bearer: 'replayer', key: 'adm:replay' })).status, 201);
  for (let index = 0; index < 5; index++) await put({ ip: '10.8.8.8' });
  assertRefused(
    t,
    await put({ ip: '10.8.8.8', bearer: 'replayer', key: 'adm:replay', idempotency_key: 'r1', value: { text: 'same' } }),
    'blackboard_admission:ip_puts',
  );
});

test.serial('retention: beyond the row cap the oldest rows expire first', async (t) => {
  const ids: string[] = [];
  for (let index = 0; index < 6; index++) ids.push((await put({ value: { text: `keep ${index}`, topics: ['retention'] } })).body.id);
  const full = await svc.client().blackboard.query({ query: { topic: 'retention' } });
  t.deepEqual(
    full.items.map((item) => item.id),
    [...ids].reverse(),
    'at the cap, every row is kept',
  );
  ids.push((await put({ value: { text: 'one more', topics: ['retention'] } })).body.id);
  const capped = await svc.client().blackboard.query({ query: { topic: 'retention' } });
  t.deepEqual(
    capped.items.map((item) => item.id),
    ids.slice(1).reverse(),
  );
  t.is((await fetch(`${svc.apiUrl}/api/v1/blackboard/${ids[0]}`)).status, 404);
});

test.serial('retention: a long gap in the sequence leaves older rows only until housekeeping sweeps them', async (t) => {
  const { sequelize } = svc.server.database;
  const count = async () => (await sequelize.query<{ n: number }>('SELECT count(*)::int AS n FROM blackboard_items', { type: QueryTypes.SELECT }))[0]!.n;
  for (let index = 0; index < 6; index++) await put({ value: { text: `before the gap ${index}` } });
  t.is(await count(), 6);
  // Numbers spent by puts that rolled back: far more than a put looks back when it retires rows.
  await sequelize.query(`SELECT setval('blackboard_items_seq_seq', (SELECT max(seq) FROM blackboard_items) + 500)`);
  const newest = await put({ value: { text: 'after the gap' } });
  t.is(await count(), 7, 'the put retired nothing: the row it pushed out lies beyond where it looks');
  await sweepRetention(sequelize, 6);
  t.is(await count(), 6);
  const page = await svc.client().blackboard.query({ query: { limit: 10 } });
  t.is(page.items[0]!.id, newest.body.id);
  t.is(page.items.length, 6);
});

test.serial('concurrent puts at the edge of a window: exactly the cap is admitted, the rest refused, in one batch or many', async (t) => {
  const results = await Promise.all(Array.from({ length: 8 }, (_, index) => put({ key: 'adm:burst', value: { text: `burst ${index}` } })));
  t.is(results.filter((result) => result.status === 201).length, 3);
  t.deepEqual(new Set(results.filter((result) => result.status !== 201).map((result) => result.body.code)), new Set(['blackboard_admission:channel_posts']));
  const page = await svc.client().blackboard.get({ query: { key: 'adm:burst' } });
  t.is(page.items.length, 3);
  // created_at grows in commit order: ids answered 201 appear newest first, none repeated.
  t.is(new Set(page.items.map((item) => item.created_at)).size, 3);
});

test.serial('the channel window is the newest stored rows', async (t) => {
  await put({ key: 'win:old', value: { text: 'old' } });
  for (let index = 0; index < 4; index++) await put({ key: `win:new${index % 2}`, value: { text: 'new' } });
  const page = await svc.client().blackboard.channels();
  t.deepEqual(page.channels.map((channel) => channel.key).sort(), ['win:new0', 'win:new1']);
  t.deepEqual(
    page.channels.map((channel) => channel.posts),
    [2, 2],
  );
  t.is(page.window_rows, 4);
});
