import test from 'ava';
import OpenAI from 'openai';
import { startFakeOpenAiUpstream, toolAnswer, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';

/**
 * previous_response_id across two `svc-server` processes on one database: the conversation lives in
 * the database, never in a process. On PostgreSQL (TEST_DATABASE_URL) both replicas run at once and
 * each continues what the other stored. The embedded database belongs to one process at a time (its
 * data directory is locked), so there the first process stops and a second one starts on the same
 * data directory and continues: still two processes, one after the other.
 */
const TOKEN = 'responses-replicas-operator-token-0123456789';
const tool = { type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false };
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
  const server = await startServerProcess(database, { SVC_OPERATOR_TOKEN: TOKEN, SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_MODELS: 'tool-a' });
  started.push(server);
  return server;
};
const clientOf = (server: ServerProcess) => new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: TOKEN, maxRetries: 0 });

test('a conversation started on one process continues on another through previous_response_id', async (t) => {
  const a = await start();
  const first = await clientOf(a).responses.create({ model: 'tool-a', input: 'Weather in Paris?', tools: [tool] });
  const call = first.output.find((item) => item.type === 'function_call');
  if (call?.type !== 'function_call') return t.fail('no function call');
  const shared = database.kind === 'postgres';
  if (!shared) await a.stop();
  const b = await start();
  const second = await clientOf(b).responses.create({
    model: 'tool-a',
    previous_response_id: first.id,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
    tools: [tool],
  });
  t.is(second.output_text, toolAnswer('sunny'));
  t.is(second.previous_response_id, first.id);
  // The history reached the upstream whole: the user's question, the call, its output.
  const sent = fake.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)!;
  t.deepEqual(
    (sent.body.messages as Array<{ role: string }>).map((message) => message.role),
    ['user', 'assistant', 'tool'],
  );
  // Each stored response is readable from the other process (on PostgreSQL, both are up).
  const reader = shared ? clientOf(a) : clientOf(b);
  t.is((await reader.responses.retrieve(second.id)).output_text, toolAnswer('sunny'));
  t.is((await clientOf(b).responses.retrieve(first.id)).id, first.id);
});
