import test from 'ava';
import OpenAI from 'openai';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * OpenAI's background mode with the official `openai` client, unchanged: `background: true`
 * answers at once, `responses.retrieve` polls it to its end, `responses.cancel` stops it, and a
 * background stream cut after 3 events resumes with `starting_after` on the other replica with no
 * event lost or repeated. On PostgreSQL (TEST_DATABASE_URL) the two replicas are two servers on one
 * database; the embedded database belongs to one server, so there both clients reach the same one.
 */
let database: TestDatabase;
let fake: FakeUpstream;
let a: TestServer;
let b: TestServer;

test.before(async () => {
  database = await createTestDatabase();
  fake = await startFakeOpenAiUpstream({ chunkDelayMs: 30 });
  const env = { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_MODELS: 'answer-a,slow-a' };
  a = await startTestServer({ database, env });
  b = database.kind === 'postgres' ? await startTestServer({ database, env }) : a;
});
test.after.always(async () => {
  if (b !== a) await b?.close();
  await a?.close();
  await fake?.close();
  await database?.drop();
});

const clientOf = (server: TestServer) => new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: server.operatorToken, maxRetries: 0 });

test('background: true answers at once, and responses.retrieve polls it to completed on either replica, with its usage', async (t) => {
  const created = await clientOf(a).responses.create({ model: 'answer-a', input: 'Say hello.', background: true });
  t.true(['queued', 'in_progress'].includes(created.status ?? ''), created.status);
  t.true(created.background);
  t.deepEqual(created.output, []);
  const done = await waitUntil(
    () => `response ${created.id} to complete`,
    async () => {
      const polled = await clientOf(b).responses.retrieve(created.id);
      return polled.status === 'completed' && polled;
    },
    { timeoutMs: 30_000, intervalMs: 50 },
  );
  t.is(done.output_text, 'Hello from the fake upstream, one word at a time.');
  t.true(done.background);
  t.true((done.usage?.output_tokens ?? 0) > 0);
});

test('responses.cancel from the other replica stops a running background response: cancelled, and it stays so', async (t) => {
  const created = await clientOf(a).responses.create({ model: 'slow-a', input: 'Count slowly.', background: true });
  const cancelled = await clientOf(b).responses.cancel(created.id);
  t.is(cancelled.status, 'cancelled');
  t.is((await clientOf(a).responses.retrieve(created.id)).status, 'cancelled');
  // A retried cancel is safe: the response as it ended.
  t.is((await clientOf(a).responses.cancel(created.id)).status, 'cancelled');
});

test('a foreground response cannot be cancelled nor streamed again: 404', async (t) => {
  const foreground = await clientOf(a).responses.create({ model: 'answer-a', input: 'Say hello.' });
  const error = await t.throwsAsync(clientOf(a).responses.cancel(foreground.id));
  t.is((error as { status?: number }).status, 404);
});

test('background: true with store: false is refused (a background response must be kept to be polled)', async (t) => {
  const error = await t.throwsAsync(clientOf(a).responses.create({ model: 'answer-a', input: 'Say hello.', background: true, store: false }));
  t.is((error as { status?: number }).status, 400);
});

test('a background stream cut after 3 events resumes on the other replica with starting_after: every event once, in order', async (t) => {
  const stream = await clientOf(a).responses.create({ model: 'answer-a', input: 'Say hello.', background: true, stream: true });
  const seen: OpenAI.Responses.ResponseStreamEvent[] = [];
  let id = '';
  for await (const event of stream) {
    seen.push(event);
    if (event.type === 'response.created') id = event.response.id;
    if (seen.length === 3) break;
  }
  t.truthy(id);
  const resumed = await clientOf(b).responses.retrieve(id, { stream: true, starting_after: seen.at(-1)!.sequence_number });
  for await (const event of resumed) seen.push(event);
  t.deepEqual(
    seen.map((event) => event.sequence_number),
    seen.map((_, index) => index),
  );
  t.is(seen[0]!.type, 'response.created');
  t.is(seen.at(-1)!.type, 'response.completed');
  const text = seen.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');
  t.is(text, 'Hello from the fake upstream, one word at a time.');
});
