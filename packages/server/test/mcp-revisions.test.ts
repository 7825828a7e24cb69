import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

/** The blackboard's MCP endpoint exactly as its server card (`<endpoint>/server-card`) names it: a new user's clients start there. */
async function endpointFromCard(): Promise<URL> {
  const card = (await (await fetch(`${svc.apiUrl}/api/mcp/server-card`)).json()) as { remotes: Array<{ type: string; url: string }> };
  const remote = card.remotes.find((entry) => entry.type === 'streamable-http');
  if (!remote) throw new Error('the server card names no streamable-http endpoint');
  return new URL(remote.url);
}

type Mode = 'legacy' | 'auto' | { pin: string };

async function connectV2(mode: Mode) {
  const client = new ClientV2({ name: 'svc-test-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
  await client.connect(new TransportV2(await endpointFromCard()));
  return client;
}

async function connectV1() {
  const client = new ClientV1({ name: 'svc-test-v1', version: '1.0.0' });
  await client.connect(new TransportV1(await endpointFromCard()));
  return client;
}

interface ToolClient {
  listTools(): Promise<{ tools: Array<{ name: string }> }>;
  callTool(request: { name: string; arguments: Record<string, unknown> }): Promise<{ isError?: boolean; structuredContent?: unknown }>;
  close(): Promise<void>;
}

/** Lists the one tool and posts then reads through it: the whole round trip a new user tries. */
async function exerciseTool(t: import('ava').ExecutionContext, client: ToolClient, label: string) {
  try {
    const { tools } = await client.listTools();
    t.deepEqual(
      tools.map((tool) => tool.name),
      ['blackboard'],
      label,
    );
    const key = `mcp-revisions:${label}`;
    const put = await client.callTool({ name: 'blackboard', arguments: { op: 'put', key, value: { text: `hello from ${label}` } } });
    t.falsy(put.isError, `${label}: ${JSON.stringify(put.structuredContent)}`);
    const got = await client.callTool({ name: 'blackboard', arguments: { op: 'get', key } });
    t.deepEqual(
      (got.structuredContent as { items: Array<{ item: { text: string } }> }).items.map((item) => item.item.text),
      [`hello from ${label}`],
    );
  } finally {
    await client.close();
  }
}

test('the v1 SDK client (2025-11-25) lists and calls the tool at the endpoint the card names', async (t) => {
  await exerciseTool(t, (await connectV1()) as unknown as ToolClient, 'v1');
});

test('the v2 client in legacy mode lists and calls the tool', async (t) => {
  const client = await connectV2('legacy');
  t.is(client.getNegotiatedProtocolVersion?.() ?? '2025-11-25', '2025-11-25');
  await exerciseTool(t, client as unknown as ToolClient, 'v2-legacy');
});

test('the v2 client in auto mode negotiates 2026-07-28 and lists and calls the tool', async (t) => {
  const client = await connectV2('auto');
  t.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  await exerciseTool(t, client as unknown as ToolClient, 'v2-auto');
});

test('the v2 client pinned to 2026-07-28 lists and calls the tool', async (t) => {
  const client = await connectV2({ pin: '2026-07-28' });
  t.is(client.getNegotiatedProtocolVersion(), '2026-07-28');
  await exerciseTool(t, client as unknown as ToolClient, 'v2-pinned');
});

const META_KEYS = { version: 'io.modelcontextprotocol/protocolVersion', serverInfo: 'io.modelcontextprotocol/serverInfo' };
const modernMeta = {
  [META_KEYS.version]: '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/** One raw POST, for the wire details an SDK client hides. */
async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${svc.apiUrl}/api/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? (JSON.parse(text) as Record<string, any>) : undefined };
}
const modern = (method: string, extra: Record<string, string> = {}) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...extra });

test('2026-07-28: server/discover and tools/list carry ttlMs, cacheScope and serverInfo in _meta; no listChanged', async (t) => {
  const discover = await post({ jsonrpc: '2.0', id: 'd1', method: 'server/discover', params: { _meta: modernMeta } }, modern('server/discover'));
  t.is(discover.status, 200, discover.text);
  const result = discover.json!.result;
  t.true(result.supportedVersions.includes('2026-07-28'));
  t.is(result.ttlMs, 300_000);
  t.is(result.cacheScope, 'public');
  t.is(result._meta[META_KEYS.serverInfo].name, 'svc-blackboard');
  t.falsy(result.capabilities.tools.listChanged, 'a stateless server has no list to announce changes of');

  const listed = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: modernMeta } }, modern('tools/list'));
  t.is(listed.status, 200, listed.text);
  t.is(listed.json!.result.tools[0].name, 'blackboard');
  t.is(listed.json!.result.ttlMs, 300_000);
  t.is(listed.json!.result.cacheScope, 'public');
  t.is(listed.json!.result._meta[META_KEYS.serverInfo].name, 'svc-blackboard');

  const called = await post(
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { _meta: modernMeta, name: 'blackboard', arguments: { op: 'channels', limit: 1 } } },
    modern('tools/call', { 'mcp-name': 'blackboard' }),
  );
  t.is(called.status, 200, called.text);
  t.false(Boolean(called.json!.result.isError), called.text);
  t.true(Array.isArray(called.json!.result.structuredContent.channels));
});

test('an unknown revision is 400 -32022 listing every served revision, in the header or the _meta claim', async (t) => {
  for (const [label, answer] of [
    ['header', await post({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} }, { 'mcp-protocol-version': '1999-01-01' })],
    [
      'claim',
      await post(
        { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: { ...modernMeta, [META_KEYS.version]: '2099-01-01' } } },
        modern('tools/list', { 'mcp-protocol-version': '2099-01-01' }),
      ),
    ],
  ] as const) {
    t.is(answer.status, 400, label);
    t.is(answer.json!.error.code, -32022, label);
    t.is(answer.json!.id, 4, label);
    t.deepEqual(answer.json!.error.data.supported.slice(0, 2), ['2026-07-28', '2025-11-25'], label);
  }
});

test('2026-07-28 header checks: a missing Mcp-Method or an Mcp-Name that differs from params.name is 400 -32020', async (t) => {
  const missing = await post({ jsonrpc: '2.0', id: 5, method: 'tools/list', params: { _meta: modernMeta } }, { 'mcp-protocol-version': '2026-07-28' });
  t.is(missing.status, 400);
  t.is(missing.json!.error.code, -32020);
  const mismatch = await post(
    { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { _meta: modernMeta, name: 'blackboard', arguments: { op: 'channels' } } },
    modern('tools/call', { 'mcp-name': 'other' }),
  );
  t.is(mismatch.status, 400);
  t.is(mismatch.json!.error.code, -32020);
});

test('an unimplemented method is 404 -32601 at 2026-07-28 and in-band -32601 at 2025-11-25', async (t) => {
  const modernAnswer = await post({ jsonrpc: '2.0', id: 7, method: 'prompts/list', params: { _meta: modernMeta } }, modern('prompts/list'));
  t.is(modernAnswer.status, 404);
  t.is(modernAnswer.json!.error.code, -32601);
  const legacyAnswer = await post({ jsonrpc: '2.0', id: 7, method: 'prompts/list', params: {} }, { 'mcp-protocol-version': '2025-11-25' });
  t.is(legacyAnswer.status, 200);
  t.is(legacyAnswer.json!.error.code, -32601);
});

test('2025-11-25: initialize answers JSON without listChanged; notifications/initialized is 202 with no body; GET is 405', async (t) => {
  const initialized = await post({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  t.is(initialized.status, 200);
  t.regex(initialized.headers.get('content-type') ?? '', /^application\/json/);
  t.is(initialized.json!.result.protocolVersion, '2025-11-25');
  t.is(initialized.json!.result.serverInfo.name, 'svc-blackboard');
  t.falsy(initialized.json!.result.capabilities.tools.listChanged);
  const notified = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': '2025-11-25' });
  t.is(notified.status, 202);
  t.is(notified.text, '');
  const modernNotification = await post(
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { _meta: modernMeta, requestId: 1 } },
    modern('notifications/cancelled'),
  );
  t.is(modernNotification.status, 202);
  t.is((await fetch(`${svc.apiUrl}/api/mcp`)).status, 405);
});

test('string arguments are -32602 with a readable message at both revisions; bad arguments are a tool error', async (t) => {
  for (const [label, answer] of [
    [
      '2025-11-25',
      await post(
        { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'blackboard', arguments: '{"op":"get"}' } },
        { 'mcp-protocol-version': '2025-11-25' },
      ),
    ],
    [
      '2026-07-28',
      await post(
        { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { _meta: modernMeta, name: 'blackboard', arguments: '{"op":"get"}' } },
        modern('tools/call', { 'mcp-name': 'blackboard' }),
      ),
    ],
  ] as const) {
    t.is(answer.json!.error.code, -32602, label);
    t.is(answer.json!.error.message, "Invalid params: tools/call arguments must be a JSON object of the tool's arguments, got a string.", label);
  }
  const wrongOp = await post(
    { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'blackboard', arguments: { op: 'zzz' } } },
    { 'mcp-protocol-version': '2025-11-25' },
  );
  t.true(wrongOp.json!.result.isError);
  t.regex(wrongOp.json!.result.content[0].text, /op/);
});

test('a body that is not JSON is 400 -32700 and one that is not JSON-RPC is 400 -32600, as JSON-RPC errors', async (t) => {
  const send = (body: string) =>
    fetch(`${svc.apiUrl}/api/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
  const notJson = await send('{"jsonrpc": "2.0", "id": 1, ');
  t.is(notJson.status, 400);
  const parseError = await notJson.json();
  t.is(parseError.jsonrpc, '2.0');
  t.is(parseError.error.code, -32700);
  const notRpc = await send(JSON.stringify({ id: 1, method: 'tools/list' }));
  t.is(notRpc.status, 400);
  t.is((await notRpc.json()).error.code, -32600);
});
