import test from 'ava';
import { QueryTypes } from 'sequelize';
import { CACHE_STATUS_HEADER } from '@svc/schemas';
import { waitUntil } from '@svc/testing/wait-until';
import { startUpstreamHarness, type UpstreamHarness } from './helpers/inference-upstream-setup.ts';

/**
 * The response cache's limits at their edges, each on a server of its own settings: the TTL
 * (served before it, a miss from it on), the entry cap (N entries live, the N+1st evicts the
 * oldest), the byte cap (answers adding up to exactly the cap all live, one byte less and the
 * oldest goes) and the entry size cap (an answer of exactly the cap is kept, one byte over is not).
 */
const harnesses: UpstreamHarness[] = [];
const models = {
  upstreams: [],
  models: [{ id: 'team-embed', upstream: 'upstream', upstream_model: 'embed-x', capabilities: ['embeddings' as const], dimensions: 4 }],
};

async function serverWith(env: Record<string, string>) {
  const harness = await startUpstreamHarness({ modelsFile: models, env });
  harnesses.push(harness);
  return harness;
}
test.after.always(async () => {
  await Promise.all(harnesses.map((harness) => harness.close()));
});

/**
 * A request whose answer has the same size for any `name`: 40 inputs of two words each, base64
 * (each vector is 4 float32, 24 characters whatever its values).
 */
const sameSizeRequest = (name: string) => ({
  model: 'team-embed',
  encoding_format: 'base64',
  input: Array.from({ length: 40 }, (_, index) => `${name} ${index}`),
});

async function embed(harness: UpstreamHarness, name: string) {
  const response = await fetch(`${harness.svc.baseUrl}/v1/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.svc.operatorToken}` },
    body: JSON.stringify(sameSizeRequest(name)),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`embeddings answered ${response.status}: ${text}`);
  return { cache: response.headers.get(CACHE_STATUS_HEADER), bytes: Buffer.byteLength(text) };
}

/** Whether each named request is a hit now (read in order; a miss stores its answer again). */
const statuses = async (harness: UpstreamHarness, names: string[]) => {
  const seen: Record<string, string | null> = {};
  for (const name of names) seen[name] = (await embed(harness, name)).cache;
  return seen;
};

test('an entry is served until its TTL and is a miss from then on', async (t) => {
  const harness = await serverWith({ SVC_RESPONSE_CACHE_TTL_SECONDS: '2' });
  const storing = performance.now();
  t.is((await embed(harness, 'ttl')).cache, 'miss');
  const stored = performance.now();
  t.is((await embed(harness, 'ttl')).cache, 'hit');
  t.true(performance.now() - storing < 2_000, 'the hit came within the TTL');
  const expiredAt = await waitUntil('the entry to expire', async () => (await embed(harness, 'ttl')).cache === 'miss' && performance.now(), {
    timeoutMs: 8_000,
    intervalMs: 100,
  });
  t.true(expiredAt - storing >= 2_000, `served for ${Math.round(expiredAt - storing)} ms from the request that stored it: not less than the TTL`);
  t.true(expiredAt - stored < 2_000 + 3_000, `expired ${Math.round(expiredAt - stored)} ms after it was stored`);
});

test('SVC_RESPONSE_CACHE_MAX_ENTRIES=3: three entries live; a fourth evicts the oldest', async (t) => {
  const harness = await serverWith({ SVC_RESPONSE_CACHE_MAX_ENTRIES: '3' });
  for (const name of ['a', 'b', 'c']) t.is((await embed(harness, name)).cache, 'miss');
  t.deepEqual(await statuses(harness, ['a', 'b', 'c']), { a: 'hit', b: 'hit', c: 'hit' }, 'three fit');
  t.is((await embed(harness, 'd')).cache, 'miss');
  const [rows] = await harness.svc.server.database.sequelize.query<{ count: number }>('SELECT count(*)::int AS count FROM svc_response_cache', {
    type: QueryTypes.SELECT,
  });
  t.is(rows!.count, 3, 'the write that stored the fourth deleted the oldest row, not only hid it');
  t.deepEqual(await statuses(harness, ['d', 'c', 'b', 'a']), { d: 'hit', c: 'hit', b: 'hit', a: 'miss' }, 'the oldest went first');
});

test('the byte and entry-size caps at their edges, from the measured size of one answer', async (t) => {
  const probe = await serverWith({});
  const size = (await embed(probe, 'probe')).bytes;
  t.true(size > 1_025, `answers of ${size} bytes: above the smallest caps the settings take`);
  t.is((await embed(probe, 'other')).bytes, size, 'every request of this shape answers the same size');

  const exact = await serverWith({ SVC_RESPONSE_CACHE_MAX_BYTES: String(2 * size), SVC_RESPONSE_CACHE_MAX_ENTRY_BYTES: String(size) });
  for (const name of ['a', 'b']) t.is((await embed(exact, name)).cache, 'miss');
  t.deepEqual(await statuses(exact, ['a', 'b']), { a: 'hit', b: 'hit' }, 'two answers fill the cap exactly; an answer the size of the entry cap is kept');
  t.is((await embed(exact, 'c')).cache, 'miss');
  t.deepEqual(await statuses(exact, ['c', 'b', 'a']), { c: 'hit', b: 'hit', a: 'miss' }, 'a third pushes the oldest out');

  const oneShort = await serverWith({ SVC_RESPONSE_CACHE_MAX_BYTES: String(2 * size - 1), SVC_RESPONSE_CACHE_MAX_ENTRY_BYTES: String(size) });
  for (const name of ['a', 'b']) t.is((await embed(oneShort, name)).cache, 'miss');
  t.deepEqual(await statuses(oneShort, ['b', 'a']), { b: 'hit', a: 'miss' }, 'one byte short of two answers: only the newer lives');

  const entryTooBig = await serverWith({ SVC_RESPONSE_CACHE_MAX_ENTRY_BYTES: String(size - 1) });
  t.is((await embed(entryTooBig, 'a')).cache, 'miss');
  t.is((await embed(entryTooBig, 'a')).cache, 'miss', 'an answer one byte over the entry cap is sent, not kept');
  const report = await entryTooBig.svc.operator.models.cache();
  t.like(
    report.caches.find((cache) => cache.name === 'response-cache'),
    { entries: 0, misses: 2 },
  );
});

test('SVC_RESPONSE_CACHE=false: nothing is looked up or stored, every call goes upstream, and the report still answers', async (t) => {
  const harness = await serverWith({ SVC_RESPONSE_CACHE: 'false' });
  t.is((await embed(harness, 'off')).cache, null);
  t.is((await embed(harness, 'off')).cache, null);
  t.is(harness.fake.requests.filter((request) => request.path === '/v1/embeddings').length, 2);
  t.like(
    (await harness.svc.operator.models.cache()).caches.find((cache) => cache.name === 'response-cache'),
    { entries: 0, hits: 0, misses: 0, hit_rate: null },
  );
});

type PgLikeClient = { query: (config: unknown, ...rest: unknown[]) => unknown };

/**
 * Counts the statements on the cache's tables, on every connection the database hands out (both
 * Sequelize's queries and the prepared read go through one). Counting every connection taken also
 * counted the server's own background checks, which a loaded CI run saw land inside a hit.
 */
function countCacheStatements(sequelize: unknown, count: () => void): void {
  const manager = (sequelize as { connectionManager: { getConnection: (...args: unknown[]) => Promise<unknown> } }).connectionManager;
  const getConnection = manager.getConnection.bind(manager);
  const wrapped = new WeakSet<object>();
  manager.getConnection = async (...args) => {
    const client = (await getConnection(...args)) as PgLikeClient;
    if (!wrapped.has(client)) {
      wrapped.add(client);
      const query = client.query.bind(client);
      client.query = (config, ...rest) => {
        const text = typeof config === 'string' ? config : (config as { text?: unknown } | undefined)?.text;
        if (typeof text === 'string' && text.includes('svc_response_cache')) count();
        return query(config, ...rest);
      };
    }
    return client;
  };
}

test('a body held in memory is sent only while its row is live and of the same version, whoever changed the database', async (t) => {
  // Trust 0: on PostgreSQL every held hit reads its row's standing (the next test has the trusted window).
  const harness = await serverWith({ SVC_RESPONSE_CACHE_MEMORY_TRUST_MS: '0' });
  const database = harness.svc.server.database;
  const sql = (text: string, bind?: unknown[]) => database.sequelize.query(text, bind ? { bind } : {});
  const upstreamCalls = () => harness.fake.requests.filter((request) => request.path === '/v1/embeddings').length;
  const held = async () => {
    const response = await fetch(`${harness.svc.baseUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${harness.svc.operatorToken}` },
      body: JSON.stringify(sameSizeRequest('held')),
    });
    return { cache: response.headers.get(CACHE_STATUS_HEADER), text: await response.text() };
  };
  let connections = 0;
  countCacheStatements(database.sequelize, () => connections++);
  const first = await held();
  t.is(first.cache, 'miss');
  t.true(connections > 0, 'the miss read and wrote its entry: the statements are counted');
  const before = connections;
  t.deepEqual(await held(), { cache: 'hit', text: first.text }, 'held since its write');
  if (database.kind === 'embedded') {
    // No other process opens the embedded database, so every change to the cache is this process's own (the other tests of this file).
    t.is(connections - before, 0, 'on the embedded database a held hit asks the database nothing');
  } else {
    t.is(connections - before, 1, 'on a shared database a held hit reads the row, once');
    // Each change below is made in SQL, as another replica's purge, write or eviction would be: this process hears of none.
    await sql('DELETE FROM svc_response_cache');
    t.is((await held()).cache, 'miss', 'a purge elsewhere: the held body is not sent');
    t.is(upstreamCalls(), 2);
    const rewritten = JSON.stringify({ ...JSON.parse(first.text), model: 'stored-by-another-replica' });
    await sql('UPDATE svc_response_cache SET body = $1, entry_seq = entry_seq + 1000, bytes_end = bytes_end + 1000', [rewritten]);
    await sql('UPDATE svc_response_cache_totals SET entries_written = entries_written + 1000, bytes_written = bytes_written + 1000');
    t.deepEqual(await held(), { cache: 'hit', text: rewritten }, 'a newer version stored elsewhere is read, not the held one');
    t.deepEqual(await held(), { cache: 'hit', text: rewritten }, 'and held from then on');
    await sql('UPDATE svc_response_cache SET expires_at = now()');
    t.is((await held()).cache, 'miss', 'past its TTL');
    await sql('UPDATE svc_response_cache_totals SET entries_written = entries_written + 100000');
    t.is((await held()).cache, 'miss', 'pushed past the entry cap by writes elsewhere');
    t.is(upstreamCalls(), 4);
  }

  if (database.kind === 'postgres') {
    const trusting = await serverWith({ SVC_RESPONSE_CACHE_MEMORY_TRUST_MS: '10000' });
    let taken = 0;
    countCacheStatements(trusting.svc.server.database.sequelize, () => taken++);
    t.is((await embed(trusting, 'trusted')).cache, 'miss');
    const before = taken;
    t.is((await embed(trusting, 'trusted')).cache, 'hit');
    t.is(taken - before, 0, 'within SVC_RESPONSE_CACHE_MEMORY_TRUST_MS of its write a held hit asks the database nothing');
  }

  const none = await serverWith({ SVC_RESPONSE_CACHE_MEMORY_BYTES: '0' });
  const stored = await embed(none, 'unheld');
  t.is(stored.cache, 'miss');
  t.deepEqual(await embed(none, 'unheld'), { cache: 'hit', bytes: stored.bytes }, 'SVC_RESPONSE_CACHE_MEMORY_BYTES=0: every hit reads the body');
});
