import test from 'ava';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome, type TaskExecutionEvent } from '@modelcontextprotocol/ext-tasks/client';
import { mcpContract, urlFor } from '@svc/schemas';
import { slowPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The MCP Tasks extension at 2026-07-28 (`io.modelcontextprotocol/tasks`) with
 * `@modelcontextprotocol/ext-tasks`'s client, unchanged, over the v2 client in the modern era. The
 * extension's session sends task wire shapes through a host dispatch (`rawDispatch`, here a
 * plain POST of the JSON-RPC message, as its README asks a host to give) and frames each request
 * with the client's capabilities. A long tool runs through a task, its progress is read through
 * the task, its result comes inline with the ended task, and a cancel stops it.
 */
const REVISION = '2026-07-28';
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

async function sessionOn(server: TestServer) {
  const endpoint = urlFor(server.server.urls(), mcpContract.endpoint);
  const authorization = `Bearer ${server.operatorToken}`;
  const client = new ClientV2({ name: 'svc-ext-tasks-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: REVISION } } });
  await client.connect(new TransportV2(new URL(endpoint), { requestInit: { headers: { authorization } } }));
  let next = 0;
  const rawDispatch = async (request: unknown, options?: { signal?: AbortSignal; context?: { headers?: Record<string, string> } }) => {
    const message = request as { method: string; params?: { name?: string } };
    const headers: Record<string, string> = {
      authorization,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': REVISION,
      'mcp-method': message.method,
      ...(message.method === 'tools/call' && message.params?.name ? { 'mcp-name': message.params.name } : {}),
      ...options?.context?.headers,
    };
    const response = await fetch(endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: ++next, ...message }),
      ...(options?.signal ? { signal: options.signal } : {}),
    });
    const text = await response.text();
    // A JSON answer, or an event stream whose last data line is the answer.
    const json = JSON.parse(text.startsWith('{') ? text : (text.split('\n').findLast((line) => line.startsWith('data: ')) ?? '').slice(6)) as {
      result?: unknown;
      error?: { code: number; message: string; data?: unknown };
    };
    return json.error ? { kind: 'error' as const, error: json.error } : { kind: 'result' as const, result: json.result };
  };
  const session = createTaskSessionFromClient(client, {
    endpointId: `svc-test-v2-${server.baseUrl}`,
    rawDispatch: rawDispatch as never,
    v2RequestFraming: { protocolVersion: REVISION, clientInfo: { name: 'svc-ext-tasks-v2', version: '1.0.0' }, clientCapabilities: {} },
  });
  return { client, session };
}

test.serial('the server offers the extension at 2026-07-28; a long tool runs through a task: its progress, then its result inline', async (t) => {
  const { client, session } = await sessionOn(svc);
  try {
    t.is(client.getProtocolEra(), 'modern');
    t.deepEqual(client.getServerCapabilities()?.extensions?.['io.modelcontextprotocol/tasks'], {});
    t.true(session.capabilities.execution);
    t.true(session.capabilities.cancellation);
    const pages = 12;
    const execution = await session.callTool(
      'pdf_extract',
      { data_base64: slowPdf(pages, 3_000, { shortText: true }).toString('base64'), max_pages: pages },
      { task: { preference: 'require' } },
    );
    t.is(execution.kind, 'task');
    const events: Array<TaskExecutionEvent<unknown>> = [];
    const { outcome } = await execution.settle({ onEvent: (event) => void events.push(event) });
    t.is(outcome.status, 'completed');
    const result = resultFromTaskOutcome(outcome) as { structuredContent?: { pages?: unknown[] }; isError?: boolean };
    t.falsy(result.isError);
    t.is(result.structuredContent?.pages?.length, pages);
    const tasks = events.flatMap((event) => (event.type === 'task' ? [event.task] : []));
    t.is(tasks.at(-1)?.status, 'completed', tasks.map((task) => task.status).join(','));
    const progress = tasks.flatMap((task) => {
      const step = /: (\d+) page-extracted/.exec(task.statusMessage ?? '');
      return step ? [Number(step[1])] : [];
    });
    t.log(`statuses ${tasks.map((task) => task.statusMessage ?? task.status).join(' | ')}`);
    // Each says its count once ("running (attempt 1 of 2): 8 page-extracted", not "8 page-extracted 8").
    for (const task of tasks) t.notRegex(task.statusMessage ?? '', /(\d+) page-extracted \1$/, task.statusMessage);
    for (let index = 1; index < progress.length; index++) t.true(progress[index]! >= progress[index - 1]!, progress.join(','));
  } finally {
    await session.close();
    await client.close();
  }
});

test.serial('a quick tool answers at once, as without the extension', async (t) => {
  const { client, session } = await sessionOn(svc);
  try {
    const execution = await session.callTool('models_list', {});
    t.is(execution.kind, 'immediate');
  } finally {
    await session.close();
    await client.close();
  }
});

test.serial('a running task is cancelled: its work stops, and the task says cancelled', async (t) => {
  const { client, session } = await sessionOn(svc);
  try {
    const pages = 40;
    const execution = await session.callTool(
      'pdf_extract',
      { data_base64: slowPdf(pages, 7_000, { shortText: true }).toString('base64'), max_pages: pages },
      { task: { preference: 'require' } },
    );
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
