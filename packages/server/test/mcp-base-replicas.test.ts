import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * A stateless MCP client sends `notifications/cancelled` as a request of its own, which a load
 * balancer may hand to another replica than the one running the call. Here the tool call goes to
 * this test's server and every cancellation to a second `svc-server` process on the same
 * PostgreSQL (TEST_DATABASE_URL): the call's work (an upstream chat that never answers) must
 * still be given up. The embedded database belongs to one process, so there both "replicas" are
 * the one server.
 */
const TOKEN = 'mcp-base-replicas-operator-token-0123456789';
let upstream: Server;
const received: Array<{ request: IncomingMessage; closedAt?: number }> = [];
const chats = () => received.filter((entry) => entry.request.url?.endsWith('/chat/completions'));
let database: TestDatabase;
let svc: TestServer;
let replica: ServerProcess | undefined;

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
  database = await createTestDatabase();
  const env = {
    SVC_OPERATOR_TOKEN: TOKEN,
    SVC_UPSTREAM_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`,
    SVC_UPSTREAM_MODELS: 'hanging-model',
  };
  svc = await startTestServer({ database, env });
  if (database.kind === 'postgres') replica = await startServerProcess(database, env);
});
test.after.always(async () => {
  killAllServerProcesses();
  await svc?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
  await database?.drop();
});

/** What `fetch` the client is given: calls go to the first replica, a cancellation to the second (a load balancer's choice). */
function balancing(cancellations: string[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    if (typeof init?.body === 'string' && init.body.includes('"notifications/cancelled"')) {
      const second = new URL(replica?.baseUrl ?? svc.baseUrl);
      url.host = second.host;
      cancellations.push(url.origin);
    }
    return fetch(url, init);
  };
}

interface Cancellable {
  call(params: { name: string; arguments: Record<string, unknown> }, options: { signal: AbortSignal; timeout: number }): Promise<unknown>;
  close(): Promise<void>;
}

const clients: Array<{ label: string; connect: (fetchVia: typeof fetch) => Promise<Cancellable> }> = [
  {
    label: 'v1 SDK, 2025-11-25',
    async connect(fetchVia) {
      const client = new ClientV1({ name: 'replicas-v1', version: '1' });
      await client.connect(new TransportV1(new URL(`${svc.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } }, fetch: fetchVia }));
      return { call: (params, options) => client.callTool(params, undefined, options), close: () => client.close() };
    },
  },
  {
    label: 'v2 client, 2025-11-25',
    async connect(fetchVia) {
      const client = new ClientV2({ name: 'replicas-v2', version: '1' }, { versionNegotiation: { mode: 'legacy' } });
      await client.connect(new TransportV2(new URL(`${svc.baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } }, fetch: fetchVia }));
      return { call: (params, options) => client.callTool(params, options), close: () => client.close() };
    },
  },
];

for (const { label, connect } of clients) {
  test.serial(`${label}: notifications/cancelled received by another replica aborts the call's work on the replica running it`, async (t) => {
    const cancellations: string[] = [];
    const client = await connect(balancing(cancellations));
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
      await waitUntil('the cancellation to be sent', () => cancellations.length > 0);
      t.deepEqual(cancellations, [new URL(replica?.baseUrl ?? svc.baseUrl).origin], 'sent to the second replica');
      await waitUntil('the running replica to give the upstream call up', () => entry.closedAt !== undefined, { timeoutMs: 10_000 });
      await t.throwsAsync(call);
    } finally {
      await client.close();
    }
  });
}

test.serial("a cancellation of another caller's id, or of no call, cancels nothing", async (t) => {
  const before = chats().length;
  const headers = (token?: string): Record<string, string> => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    'mcp-protocol-version': '2025-11-25',
  });
  const controller = new AbortController();
  const call = fetch(`${svc.baseUrl}/mcp`, {
    method: 'POST',
    signal: controller.signal,
    headers: headers(TOKEN),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 41,
      method: 'tools/call',
      params: { name: 'inference_chat', arguments: { model: 'hanging-model', messages: [{ role: 'user', content: 'take your time' }] } },
    }),
  });
  call.catch(() => {});
  try {
    const entry = await waitUntil('the upstream to receive the chat', () => chats()[before]);
    // Another principal (no credential) names the same id on the second replica; then the caller names an id it never used.
    const second = replica?.baseUrl ?? svc.baseUrl;
    const foreign = await fetch(`${second}/mcp`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 41 } }),
    });
    t.is(foreign.status, 202, await foreign.text());
    const unknown = await fetch(`${second}/mcp`, {
      method: 'POST',
      headers: headers(TOKEN),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4242 } }),
    });
    t.is(unknown.status, 202, await unknown.text());
    await new Promise((resolve) => setTimeout(resolve, 1500));
    t.is(entry.closedAt, undefined, 'the call still runs after three poll intervals');
  } finally {
    controller.abort();
  }
});
