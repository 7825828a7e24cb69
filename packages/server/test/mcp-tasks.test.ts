import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpContract, urlFor } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * MCP Tasks at 2025-11-25 with the v1 SDK's experimental tasks client, unchanged: a long tool's
 * call becomes a task at once, on the durable task store; `tasks/get`, `tasks/result`, `tasks/list`
 * and `tasks/cancel` answer it; a task belongs to its principal; creating one passes the tool's
 * scopes and its route's validation. `paused` stores tasks but runs none (SVC_TASKS_RUNNERS=0): its
 * tasks stay queued, so a cancel is certain to find one not yet started, and its cap on a
 * principal's tasks not ended (SVC_MCP_TASKS_MAX_ACTIVE) is 3.
 */
let svc: TestServer;
let paused: TestServer;
test.before(async () => {
  [svc, paused] = await Promise.all([startTestServer(), startTestServer({ env: { SVC_TASKS_RUNNERS: '0', SVC_MCP_TASKS_MAX_ACTIVE: '3' } })]);
});
test.after.always(async () => {
  await Promise.all([svc?.close(), paused?.close()]);
});

async function connect(server: TestServer, token: string) {
  const client = new ClientV1({ name: 'svc-tasks', version: '1.0.0' });
  await client.connect(
    new TransportV1(new URL(urlFor(server.server.urls(), mcpContract.endpoint)), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

const TEXT =
  'PostgreSQL keeps a write-ahead log. Replicas replay that log to stay current. Logical replication sends row changes instead. ' +
  'A standby can serve reads while it replays. Failover promotes a standby to primary.';
const summarizeArgs = { text: TEXT, max_sentences: 2 };

test.serial('the long tools say they run as tasks, and the server says it serves them', async (t) => {
  const client = await connect(svc, svc.operatorToken);
  try {
    t.truthy(client.getServerCapabilities()?.tasks?.requests?.tools?.call);
    const { tools } = await client.listTools();
    const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    for (const name of [
      'pdf_extract',
      'documents_extract',
      'inference_chat',
      'inference_rag',
      'inference_summarize',
      'inference_embeddings',
      'inference_rerank',
      'inference_classify',
      'jobs_get',
    ])
      t.is(support[name], 'optional', name);
    t.is(support.catalog_search, undefined, 'a quick read is no task');
  } finally {
    await client.close();
  }
});

test.serial('a task-augmented call answers a task at once; polled to completed, its result is what the plain call answers', async (t) => {
  const client = await connect(svc, svc.operatorToken);
  try {
    const kinds: string[] = [];
    let result: { structuredContent?: unknown; isError?: boolean } | undefined;
    let taskId = '';
    for await (const message of client.experimental.tasks.callToolStream({ name: 'inference_summarize', arguments: summarizeArgs }, CallToolResultSchema, {
      task: { ttl: 60_000 },
    })) {
      kinds.push(message.type);
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result') result = message.result as typeof result;
      if (message.type === 'error') t.fail(String(message.error));
    }
    t.is(kinds[0], 'taskCreated');
    t.is(kinds.at(-1), 'result');
    t.regex(taskId, /^task_/);
    t.falsy(result?.isError);
    const plain = await client.callTool({ name: 'inference_summarize', arguments: summarizeArgs });
    const { usage: _taskUsage, ...fromTask } = result!.structuredContent as Record<string, unknown>;
    const { usage: _plainUsage, ...fromPlain } = plain.structuredContent as Record<string, unknown>;
    t.deepEqual(fromTask, fromPlain);

    const task = await client.experimental.tasks.getTask(taskId);
    t.is(task.status, 'completed');
    t.is(task.pollInterval, 500);
    const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    t.deepEqual(again.structuredContent, result!.structuredContent);
    t.deepEqual(again._meta?.['io.modelcontextprotocol/related-task'], { taskId });
    const { tasks } = await client.experimental.tasks.listTasks();
    t.true(tasks.some((listed) => listed.taskId === taskId));
  } finally {
    await client.close();
  }
});

test.serial('arguments the operation refuses create no task (-32602 with the REST 422 body); a tool without taskSupport is -32601', async (t) => {
  const client = await connect(svc, svc.operatorToken);
  try {
    const refused = await client.experimental.tasks
      .callToolStream({ name: 'inference_summarize', arguments: { text: '' } }, CallToolResultSchema, { task: {} })
      .next();
    t.like(refused.value, { type: 'error', error: { code: -32602, data: { status: 422, code: 'validation_failed' } } });
    // A tool that does not say it runs as a task is `forbidden` as one: -32601.
    const forbidden = await client.experimental.tasks
      .callToolStream({ name: 'catalog_search', arguments: { q: 'x' } }, CallToolResultSchema, { task: {} })
      .next();
    t.like(forbidden.value, { type: 'error', error: { code: -32601 } });
    const { tasks } = await client.experimental.tasks.listTasks();
    t.is(tasks.length, 1, 'only the task of the previous test');
  } finally {
    await client.close();
  }
});

test.serial('a task not yet started is cancelled; its result says so; a cancelled task cannot be cancelled again', async (t) => {
  const client = await connect(paused, paused.operatorToken);
  try {
    const stream = client.experimental.tasks.callToolStream({ name: 'inference_summarize', arguments: summarizeArgs }, CallToolResultSchema, { task: {} });
    const created = (await stream.next()).value as { type: string; task: { taskId: string; status: string } };
    await stream.return(undefined);
    t.is(created.type, 'taskCreated');
    t.is(created.task.status, 'working');
    const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
    t.is(cancelled.status, 'cancelled');
    t.is((await client.experimental.tasks.getTask(created.task.taskId)).status, 'cancelled');
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    t.true(result.isError);
    t.is((result.structuredContent as { code: string }).code, 'task_cancelled');
    const twice = await t.throwsAsync(client.experimental.tasks.cancelTask(created.task.taskId));
    t.regex(String(twice?.message), /-32602.*has ended \(cancelled\)/);
  } finally {
    await client.close();
  }
});

test.serial("another principal's task is unknown to it; a token without the tool's scope creates no task", async (t) => {
  const owner = await connect(paused, paused.operatorToken);
  const { session } = await signInAgent(paused, 'inference:invoke jobs:read');
  const other = await connect(paused, session.accessToken);
  const { session: reader } = await signInAgent(paused, 'jobs:read');
  const readOnly = await connect(paused, reader.accessToken);
  try {
    const stream = owner.experimental.tasks.callToolStream({ name: 'inference_summarize', arguments: summarizeArgs }, CallToolResultSchema, { task: {} });
    const created = (await stream.next()).value as { task: { taskId: string } };
    await stream.return(undefined);
    const unknown = await t.throwsAsync(other.experimental.tasks.getTask(created.task.taskId));
    t.regex(String(unknown?.message), /-32602.*No task \S+ of yours/);
    t.is((await other.experimental.tasks.listTasks()).tasks.length, 0, "the owner's task is not listed to another");
    // The tool's own scope (inference:invoke) is not held: refused at the HTTP level (403) before anything is stored.
    const refused = await readOnly.experimental.tasks
      .callToolStream({ name: 'inference_summarize', arguments: summarizeArgs }, CallToolResultSchema, { task: {} })
      .next();
    t.is((refused.value as { type: string }).type, 'error');
    t.regex(String((refused.value as { error: Error }).error.message), /403|inference:invoke/);
    t.is((await readOnly.experimental.tasks.listTasks()).tasks.length, 0, 'nothing was queued for it');
    await owner.experimental.tasks.cancelTask(created.task.taskId);
  } finally {
    await Promise.all([owner.close(), other.close(), readOnly.close()]);
  }
});

test.serial('a principal has at most SVC_MCP_TASKS_MAX_ACTIVE tasks not ended: the next is refused and stores nothing, until one ends', async (t) => {
  const client = await connect(paused, paused.operatorToken);
  try {
    const create = async () => {
      const stream = client.experimental.tasks.callToolStream({ name: 'inference_summarize', arguments: summarizeArgs }, CallToolResultSchema, { task: {} });
      const created = (await stream.next()).value as { type: string; task?: { taskId: string }; error?: { code: number; data?: { code?: string } } };
      await stream.return(undefined);
      return created;
    };
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) ids.push((await create()).task!.taskId);
    const listed = (await client.experimental.tasks.listTasks()).tasks.length;
    const refused = await create();
    t.like(refused, { type: 'error', error: { code: -32000, data: { code: 'tasks_active_limit' } } });
    t.is((await client.experimental.tasks.listTasks()).tasks.length, listed, 'the refused call stored nothing');
    await client.experimental.tasks.cancelTask(ids[0]!);
    t.is((await create()).type, 'taskCreated');
  } finally {
    await client.close();
  }
});
