import test from 'ava';
import OpenAI from 'openai';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * `kill -9` of the `svc-server` process running background responses: none stays in_progress.
 * Each ends `failed` with `task_runner_lost` once its lease runs out (here 2 s, reaped by a
 * backstop of 200 ms), read from another process on the same database (on the embedded database,
 * the next process on the same data directory, since one process owns it).
 */
const TOKEN = 'responses-kill-operator-token-0123456789';
const COUNT = 5;
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
    SVC_UPSTREAM_MODELS: 'slow-a',
    SVC_TASKS_LEASE_SECONDS: '2',
    SVC_TASKS_BACKSTOP_MS: '200',
  });
  started.push(server);
  return server;
};
const clientOf = (server: ServerProcess) => new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: TOKEN, maxRetries: 0 });

test(`a server killed with SIGKILL while running ${COUNT} background responses: each ends failed with task_runner_lost, none in_progress`, async (t) => {
  const first = await start();
  const ids: string[] = [];
  for (let index = 0; index < COUNT; index++)
    ids.push((await clientOf(first).responses.create({ model: 'slow-a', input: `Count slowly ${index}.`, background: true })).id);
  for (const id of ids) t.is((await clientOf(first).responses.retrieve(id)).status, 'in_progress');
  await first.kill();
  const killedAt = performance.now();
  const second = await start();
  for (const id of ids) {
    const ended = await waitUntil(
      () => `response ${id} to end`,
      async () => {
        const polled = await clientOf(second).responses.retrieve(id);
        return polled.status !== 'in_progress' && polled.status !== 'queued' && polled;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    t.is(ended.status, 'failed');
    t.is(ended.error?.code as string | undefined, 'task_runner_lost');
  }
  // The bound: the lease (2 s) and a backstop turn, plus the second process's start.
  t.log(`all ended ${Math.round(performance.now() - killedAt)} ms after the kill`);
});
