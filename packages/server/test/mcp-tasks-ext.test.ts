import test from 'ava';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  toolDeclarationFromMcpTool,
  type TaskExecutionEvent,
} from '@modelcontextprotocol/ext-tasks/client';
import { mcpContract, urlFor } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * MCP Tasks with `@modelcontextprotocol/ext-tasks`'s client, unchanged, over the v2 client at
 * 2025-11-25 (the revision whose core task methods svc serves; see mcp-tasks.test.ts for the v1
 * SDK): a long tool through a task, its status as it goes, its result, and a cancel. `paused`
 * stores tasks but runs none (SVC_TASKS_RUNNERS=0), so its task is certain not to have started.
 */
let svc: TestServer;
let paused: TestServer;
test.before(async () => {
  [svc, paused] = await Promise.all([startTestServer(), startTestServer({ env: { SVC_TASKS_RUNNERS: '0' } })]);
});
test.after.always(async () => {
  await Promise.all([svc?.close(), paused?.close()]);
});

async function sessionOn(server: TestServer) {
  const client = new ClientV2({ name: 'svc-ext-tasks', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
  await client.connect(
    new TransportV2(new URL(urlFor(server.server.urls(), mcpContract.endpoint)), {
      requestInit: { headers: { authorization: `Bearer ${server.operatorToken}` } },
    }),
  );
  const { tools } = await client.listTools();
  const declaration = toolDeclarationFromMcpTool(tools.find((tool) => tool.name === 'inference_summarize')!);
  const session = createTaskSessionFromClient(client, { endpointId: `svc-test-${server.baseUrl}` });
  return { client, session, declaration };
}

const summarizeArgs = {
  text: 'PostgreSQL keeps a write-ahead log. Replicas replay that log to stay current. Logical replication sends row changes instead. A standby can serve reads.',
  max_sentences: 2,
};

test.serial('ext-tasks: a long tool runs as a task; its status is followed to completed and its result is the REST answer', async (t) => {
  const { client, session, declaration } = await sessionOn(svc);
  try {
    t.true(session.capabilities.execution);
    t.true(session.capabilities.cancellation);
    t.is(session.capabilities.inventory, 'server-list');
    const execution = await session.callTool('inference_summarize', summarizeArgs, { declaration, task: { preference: 'require' } });
    t.is(execution.kind, 'task');
    const events: Array<TaskExecutionEvent<unknown>> = [];
    const { outcome } = await execution.settle({ onEvent: (event) => void events.push(event) });
    t.is(outcome.status, 'completed');
    const result = resultFromTaskOutcome(outcome) as { structuredContent?: { sentences?: unknown[] }; isError?: boolean };
    t.falsy(result.isError);
    t.is(result.structuredContent?.sentences?.length, 2);
    const statuses = events.flatMap((event) => (event.type === 'task' ? [event.task.status] : []));
    t.is(statuses.at(-1), 'completed', statuses.join(','));
    const listed = await session.listTasks();
    t.true(listed.tasks.some((task) => task.status === 'completed'));
  } finally {
    await session.close();
    await client.close();
  }
});

test.serial('ext-tasks: a task not yet started is cancelled, and its outcome says so', async (t) => {
  const { client, session, declaration } = await sessionOn(paused);
  try {
    const execution = await session.callTool('inference_summarize', summarizeArgs, { declaration, task: { preference: 'require' } });
    if (execution.kind !== 'task') return t.fail('the call did not become a task');
    const { taskId } = execution.handle;
    t.is((await session.task(taskId).snapshot()).status, 'working');
    await execution.cancel();
    const snapshot = await session.task(taskId).snapshot();
    t.is(snapshot.status, 'cancelled');
  } finally {
    await session.close();
    await client.close();
  }
});
