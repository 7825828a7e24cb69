import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mcpContract, urlFor } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * Who may cancel an MCP tool call (`notifications/cancelled`): the credential that made it. An
 * agent's keys are separate credentials: its `models:read` key may not stop a call made with its
 * `inference:invoke` key.
 */
let upstream: Server;
const chats: Array<{ request: IncomingMessage; closedAt?: number }> = [];
let svc: TestServer;

test.before(async () => {
  // An upstream that takes a chat and never answers: the call runs until something cancels it.
  upstream = createServer((request) => {
    const entry: { request: IncomingMessage; closedAt?: number } = { request };
    if (request.url?.endsWith('/chat/completions')) chats.push(entry);
    request.resume();
    request.socket.once('close', () => {
      entry.closedAt = performance.now();
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  svc = await startTestServer({
    env: { SVC_UPSTREAM_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, SVC_UPSTREAM_MODELS: 'hanging-model=chat' },
  });
});
test.after.always(async () => {
  await svc?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

async function cancel(secret: string, requestId: number) {
  const response = await fetch(urlFor(svc.server.urls(), mcpContract.endpoint), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      authorization: `Bearer ${secret}`,
    },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'test' } }),
  });
  await response.arrayBuffer();
  return response.status;
}

test("another key of the same agent cannot cancel a key's call; the key that made it can", async (t) => {
  const agent = await signInAgent(svc);
  const invoking = await agent.client.credentials.create({ body: { name: 'invokes', scopes: ['inference:invoke'] } });
  const reading = await agent.client.credentials.create({ body: { name: 'reads', scopes: ['models:read'] } });
  // The call, made with the official SDK client and the invoking key.
  const client = new Client({ name: 'cancel-credential', version: '1' });
  const sent: number[] = [];
  await client.connect(
    new StreamableHTTPClientTransport(new URL(urlFor(svc.server.urls(), mcpContract.endpoint)), {
      requestInit: { headers: { authorization: `Bearer ${invoking.secret}` } },
      // The call's JSON-RPC id, as the client numbered it.
      fetch: async (url, init) => {
        const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { id?: number; method?: string }) : undefined;
        if (body?.method === 'tools/call' && typeof body.id === 'number') sent.push(body.id);
        return fetch(url, init);
      },
    }),
  );
  try {
    const call = client.callTool(
      { name: 'inference_chat', arguments: { model: 'hanging-model', messages: [{ role: 'user', content: 'take your time' }] } },
      undefined,
      {
        timeout: 60_000,
      },
    );
    call.catch(() => {});
    const entry = await waitUntil('the upstream to receive the chat', () => chats.at(-1));
    const id = sent.at(-1)!;
    t.is(await cancel(reading.secret, id), 202);
    // The running call would be aborted at once (it runs on this replica); give it time to be wrongly so.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    t.is(entry.closedAt, undefined, "the models:read key's cancellation stopped nothing");
    t.is(await cancel(invoking.secret, id), 202);
    await waitUntil('svc to give the upstream call up', () => entry.closedAt !== undefined, { timeoutMs: 10_000 });
    t.pass();
  } finally {
    await client.close();
  }
});
