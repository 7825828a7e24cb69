import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpContract, urlFor } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * `tasks/list` a page at a time (MCP pagination, 2025-11-25: an opaque `cursor` in, `nextCursor`
 * out while more remain), walked with the v1 SDK's experimental tasks client, unchanged. The server
 * runs no task (SVC_TASKS_RUNNERS=0), so the 60 made stay queued and none ends or expires while the
 * pages are read; its cap on a principal's tasks not ended is raised past them.
 */
const MADE = 60;
/** The server's page (features/mcp/tasks.ts LIST_PAGE): 60 tasks are one full page and a part. */
const PAGE = 50;
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_TASKS_RUNNERS: '0', SVC_MCP_TASKS_MAX_ACTIVE: '100' } });
});
test.after.always(async () => {
  await svc?.close();
});

async function connect(token: string) {
  const client = new ClientV1({ name: 'svc-tasks-paging', version: '1.0.0' });
  await client.connect(
    new TransportV1(new URL(urlFor(svc.server.urls(), mcpContract.endpoint)), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

async function createTask(client: ClientV1): Promise<string> {
  const stream = client.experimental.tasks.callToolStream(
    { name: 'inference_summarize', arguments: { text: 'One sentence. Another sentence.', max_sentences: 1 } },
    CallToolResultSchema,
    { task: {} },
  );
  const created = (await stream.next()).value as { type: string; task?: { taskId: string } };
  await stream.return(undefined);
  if (!created.task) throw new Error(`no task: ${JSON.stringify(created)}`);
  return created.task.taskId;
}

test('tasks/list pages through every task newest first: a full page with nextCursor, then the rest without; none twice, none missed', async (t) => {
  const client = await connect(svc.operatorToken);
  const { session } = await signInAgent(svc, 'inference:invoke');
  const other = await connect(session.accessToken);
  try {
    const made: string[] = [];
    for (let index = 0; index < MADE; index++) made.push(await createTask(client));
    // Another principal's task is on no page of this one's.
    const stranger = await createTask(other);

    const first = await client.experimental.tasks.listTasks();
    t.is(first.tasks.length, PAGE);
    t.truthy(first.nextCursor, 'more remain');
    const second = await client.experimental.tasks.listTasks(first.nextCursor);
    t.is(second.tasks.length, MADE - PAGE);
    t.is(second.nextCursor, undefined, 'the last page says no more');
    const listed = [...first.tasks, ...second.tasks].map((task) => task.taskId);
    t.deepEqual(listed, [...made].reverse(), 'newest first, each once');
    t.false(listed.includes(stranger));
    t.deepEqual(
      (await other.experimental.tasks.listTasks()).tasks.map((task) => task.taskId),
      [stranger],
    );
  } finally {
    await Promise.all([client.close(), other.close()]);
  }
});

test('a cursor tasks/list did not give is refused with -32602 (invalid params)', async (t) => {
  const client = await connect(svc.operatorToken);
  try {
    const forged = await t.throwsAsync(client.experimental.tasks.listTasks(Buffer.from('not-a-task').toString('base64url')));
    t.regex(String(forged?.message), /-32602/);
    // A task id of another principal's is no cursor of this one's either.
    const { session } = await signInAgent(svc, 'inference:invoke');
    const other = await connect(session.accessToken);
    try {
      const theirs = await createTask(other);
      const borrowed = await t.throwsAsync(client.experimental.tasks.listTasks(Buffer.from(theirs).toString('base64url')));
      t.regex(String(borrowed?.message), /-32602/);
    } finally {
      await other.close();
    }
  } finally {
    await client.close();
  }
});
