import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mcpContract, urlFor } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * An upstream that takes a chat request and never answers: a provider that hangs. Each request
 * records when its connection closed, which is svc giving the work up.
 */
let upstream: Server;
const received: Array<{ request: IncomingMessage; closedAt?: number }> = [];
const chats = () => received.filter((entry) => entry.request.url?.endsWith('/chat/completions'));
const embeddings = () => received.filter((entry) => entry.request.url?.endsWith('/embeddings'));
let svc: TestServer;

test.before(async () => {
  upstream = createServer((request) => {
    const entry: { request: IncomingMessage; closedAt?: number } = { request };
    received.push(entry);
    request.resume();
    request.socket.once('close', () => {
      entry.closedAt = performance.now();
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  svc = await startTestServer({
    env: { SVC_UPSTREAM_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, SVC_UPSTREAM_MODELS: 'hanging-model=chat+embeddings' },
  });
});
test.after.always(async () => {
  await svc?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

/** One tool call with a signal, in each SDK's own signature (v1: params, schema, options; v2: params, options). */
interface Cancellable {
  call(params: { name: string; arguments: Record<string, unknown> }, options: { signal: AbortSignal; timeout: number }): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * How each client cancels: the v1 SDK (2025-11-25) and the v2 client at 2025-11-25 send
 * `notifications/cancelled` as a request of its own, which the endpoint matches to the running
 * call; the v2 client at 2026-07-28 aborts the call's own POST (that revision's cancellation
 * signal), which the endpoint hears as a disconnect. A raw client closing its connection is the
 * last test.
 */
const clients: Array<{ label: string; connect: () => Promise<Cancellable> }> = [
  {
    label: 'v1 SDK, 2025-11-25',
    async connect() {
      const client = new ClientV1({ name: 'cancel-v1', version: '1' });
      await client.connect(
        new TransportV1(new URL(urlFor(svc.server.urls(), mcpContract.endpoint)), {
          requestInit: { headers: { authorization: `Bearer ${svc.operatorToken}` } },
        }),
      );
      return { call: (params, options) => client.callTool(params, undefined, options), close: () => client.close() };
    },
  },
  ...(['legacy', { pin: '2026-07-28' }] as const).map((mode) => ({
    label: `v2 SDK, ${mode === 'legacy' ? '2025-11-25' : '2026-07-28'}`,
    async connect(): Promise<Cancellable> {
      const client = new ClientV2({ name: 'cancel-v2', version: '1' }, { versionNegotiation: { mode } });
      await client.connect(
        new TransportV2(new URL(urlFor(svc.server.urls(), mcpContract.endpoint)), {
          requestInit: { headers: { authorization: `Bearer ${svc.operatorToken}` } },
        }),
      );
      return { call: (params, options) => client.callTool(params, options), close: () => client.close() };
    },
  })),
];

for (const { label, connect } of clients) {
  test.serial(`${label}: cancelling a long tool call aborts its work (the upstream call is given up)`, async (t) => {
    const client = await connect();
    try {
      const before = chats().length;
      const controller = new AbortController();
      const call = client.call(
        { name: 'inference_chat', arguments: { model: 'hanging-model', messages: [{ role: 'user', content: 'take your time' }] } },
        { signal: controller.signal, timeout: 60_000 },
      );
      call.catch(() => {});
      const entry = await waitUntil('the upstream to receive the chat', () => chats()[before]);
      t.is(entry.closedAt, undefined, 'the upstream call is running');
      controller.abort();
      await waitUntil('svc to give the upstream call up', () => entry.closedAt !== undefined, { timeoutMs: 10_000 });
      await t.throwsAsync(call);
    } finally {
      await client.close();
    }
  });
}

test.serial('a cancelled call of a route served in process without HTTP emulation (embeddings, JSON only) aborts its upstream call too', async (t) => {
  const client = await clients[0]!.connect();
  try {
    const before = embeddings().length;
    const controller = new AbortController();
    const call = client.call(
      { name: 'inference_embeddings', arguments: { model: 'hanging-model', input: 'take your time' } },
      { signal: controller.signal, timeout: 60_000 },
    );
    call.catch(() => {});
    const entry = await waitUntil('the upstream to receive the embeddings call', () => embeddings()[before]);
    t.is(entry.closedAt, undefined, 'the upstream call is running');
    controller.abort();
    await waitUntil('svc to give the upstream call up', () => entry.closedAt !== undefined, { timeoutMs: 10_000 });
    await t.throwsAsync(call);
  } finally {
    await client.close();
  }
});

test.serial('a client that closes its connection mid-call (2026-07-28 cancellation) aborts the work too', async (t) => {
  const before = chats().length;
  const controller = new AbortController();
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
  const call = fetch(urlFor(svc.server.urls(), mcpContract.endpoint), {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${svc.operatorToken}`,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'inference_chat',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { _meta: envelope, name: 'inference_chat', arguments: { model: 'hanging-model', messages: [{ role: 'user', content: 'take your time' }] } },
    }),
  });
  call.catch(() => {});
  const entry = await waitUntil('the upstream to receive the chat', () => chats()[before]);
  controller.abort();
  await waitUntil('svc to give the upstream call up', () => entry.closedAt !== undefined, { timeoutMs: 10_000 });
  t.pass();
});
