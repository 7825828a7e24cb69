import test from 'ava';
import { CACHE_STATUS_HEADER } from '@svc/schemas';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';

/**
 * The response cache across two `svc-server` processes on one database: what one stored, the
 * other serves. On PostgreSQL (TEST_DATABASE_URL) both replicas run at once. The embedded
 * database belongs to one process at a time (its data directory is locked), so there the first
 * process stops and a second starts on the same data directory: still two processes, one after the other.
 */
const TOKEN = 'response-cache-replicas-operator-token-0123456789';
let database: TestDatabase;
let fake: FakeUpstream;
const started: ServerProcess[] = [];

test.before(async () => {
  database = await createTestDatabase();
  fake = await startFakeOpenAiUpstream();
});
test.after.always(async () => {
  for (const server of started) await server.stop().catch(() => undefined);
  killAllServerProcesses();
  await fake?.close();
  await database?.drop();
});

const start = async () => {
  const server = await startServerProcess(database, {
    SVC_OPERATOR_TOKEN: TOKEN,
    SVC_UPSTREAM_BASE_URL: fake.baseUrl,
    SVC_UPSTREAM_MODELS: 'embed-a=embeddings',
  });
  started.push(server);
  return server;
};

async function embed(server: ServerProcess, input: string) {
  const response = await fetch(`${server.baseUrl}/v1/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ model: 'embed-a', input }),
  });
  return { status: response.status, cache: response.headers.get(CACHE_STATUS_HEADER), text: await response.text() };
}

test('an answer stored by one replica is a hit on the other, byte for byte, with one upstream call', async (t) => {
  const a = await start();
  const first = await embed(a, 'shared between replicas');
  t.is(first.status, 200, first.text);
  t.is(first.cache, 'miss');
  const shared = database.kind === 'postgres';
  if (!shared) await a.stop();
  const b = await start();
  const second = await embed(b, 'shared between replicas');
  t.is(second.cache, 'hit');
  t.is(second.text, first.text);
  t.is(fake.requests.filter((request) => request.path === '/v1/embeddings').length, 1, 'the upstream was called once for both');
  if (shared) {
    // Both up: what b stores, a serves.
    t.is((await embed(b, 'stored by the second')).cache, 'miss');
    t.is((await embed(a, 'stored by the second')).cache, 'hit');
    t.is(fake.requests.filter((request) => request.path === '/v1/embeddings').length, 2);
    // a holds that answer in memory since its hit; b's purge still makes it a miss on a.
    t.is((await embed(a, 'stored by the second')).cache, 'hit');
    const purging = performance.now();
    const purge = await fetch(`${b.baseUrl}/v1/cache`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } });
    t.is(purge.status, 200, await purge.text());
    t.true(performance.now() - purging >= 1_000, 'the purge answered once no replica trusts what it read before (SVC_RESPONSE_CACHE_MEMORY_TRUST_MS, 1 s)');
    t.is((await embed(a, 'stored by the second')).cache, 'miss', "the other replica's purge holds on the replica that held the answer");
    t.is((await embed(b, 'stored by the second')).cache, 'hit', 'stored again by that miss, for both');
  }
});
