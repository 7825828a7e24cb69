import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpContract, urlFor } from '@svc/schemas';
import { FAKE_ANSWER, startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { slowPdf } from '@svc/testing/pdf-fixtures';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * MCP tasks on the durable task store, across replicas (on PostgreSQL; on the embedded database,
 * which one process owns, both are one server): `asker` runs no tasks (SVC_TASKS_RUNNERS=0), so
 * every task it creates runs on `runner`, and `asker` answers for it: its status, its progress
 * (which only grows), its result, and a cancel that stops the work where it runs.
 */
let database: TestDatabase;
let fake: FakeUpstream;
let runner: TestServer;
let asker: TestServer;

test.before(async () => {
  database = await createTestDatabase();
  fake = await startFakeOpenAiUpstream({ chunkDelayMs: 20 });
  const env = { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_MODELS: 'answer-a,slow-a', SVC_TASKS_BACKSTOP_MS: '1000' };
  runner = await startTestServer({ database, env });
  asker = database.kind === 'postgres' ? await startTestServer({ database, env: { ...env, SVC_TASKS_RUNNERS: '0' } }) : runner;
});
test.after.always(async () => {
  await Promise.all([runner?.close(), asker !== runner ? asker?.close() : undefined]);
  await fake?.close();
  await database?.drop();
});

async function connect(server: TestServer) {
  const client = new ClientV1({ name: 'svc-tasks-replicas', version: '1.0.0' });
  await client.connect(
    new TransportV1(new URL(urlFor(server.server.urls(), mcpContract.endpoint)), {
      requestInit: { headers: { authorization: `Bearer ${server.operatorToken}` } },
    }),
  );
  return client;
}

async function createTask(client: ClientV1, name: string, args: Record<string, unknown>): Promise<string> {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { task: {} });
  const created = (await stream.next()).value as { type: string; task?: { taskId: string }; error?: unknown };
  await stream.return(undefined);
  if (created.type !== 'taskCreated') throw new Error(`no task: ${JSON.stringify(created)}`);
  return created.task!.taskId;
}

test.serial('a chat runs as a task on the other replica; its result is the completion', async (t) => {
  const client = await connect(asker);
  try {
    const taskId = await createTask(client, 'inference_chat', { model: 'answer-a', messages: [{ role: 'user', content: 'Hello.' }] });
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    t.falsy(result.isError, JSON.stringify(result));
    const completion = result.structuredContent as { choices: Array<{ message: { content: string } }> };
    t.is(completion.choices[0]?.message.content, FAKE_ANSWER);
    t.is((await client.experimental.tasks.getTask(taskId)).status, 'completed');
    // tasks/list reads the store too: the replica the task was created on and the one that ran it both list it.
    const listedOn = async (server: TestServer) => {
      const other = server === asker ? client : await connect(server);
      try {
        return (await other.experimental.tasks.listTasks()).tasks.find((task) => task.taskId === taskId)?.status;
      } finally {
        if (other !== client) await other.close();
      }
    };
    t.is(await listedOn(asker), 'completed');
    t.is(await listedOn(runner), 'completed');
  } finally {
    await client.close();
  }
});

test.serial('a running pdf task is cancelled from the other replica: its work stops where it runs, and the task ends cancelled', async (t) => {
  const client = await connect(asker);
  try {
    const pages = 40;
    const taskId = await createTask(client, 'pdf_extract', { data_base64: slowPdf(pages, 7_000, { shortText: true }).toString('base64'), max_pages: pages });
    await waitUntil(
      () => 'the extraction to report a page',
      async () => / page-extracted/.test((await client.experimental.tasks.getTask(taskId)).statusMessage ?? ''),
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    const cancelledAt = performance.now();
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    const stoppedMs = performance.now() - cancelledAt;
    t.log(`cancelled ${Math.round(stoppedMs)} ms after the cancel was asked`);
    t.is(cancelled.status, 'cancelled');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    t.true(result.isError);
    const again = await t.throwsAsync(client.experimental.tasks.cancelTask(taskId));
    t.regex(String(again?.message), /-32602.*has ended \(cancelled\)/);
  } finally {
    await client.close();
  }
});

test.serial("a pdf task's progress is read through the task on the other replica, and it only grows", async (t) => {
  const client = await connect(asker);
  try {
    const pages = 12;
    const taskId = await createTask(client, 'pdf_extract', { data_base64: slowPdf(pages, 2_000, { shortText: true }).toString('base64'), max_pages: pages });
    const seen: number[] = [];
    let status = 'working';
    while (status === 'working') {
      const task = await client.experimental.tasks.getTask(taskId);
      status = task.status;
      const step = /: (\d+) page-extracted/.exec(task.statusMessage ?? '');
      if (step) seen.push(Number(step[1]));
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    t.is(status, 'completed');
    t.log(`progress read: ${seen.join(',')}`);
    t.true(seen.length > 0, 'some progress was read while the task ran');
    for (let index = 1; index < seen.length; index++) t.true(seen[index]! >= seen[index - 1]!, `progress went back: ${seen.join(',')}`);
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    t.is((result.structuredContent as { pages: unknown[] }).pages.length, pages);
  } finally {
    await client.close();
  }
});
