import { connect, type Socket } from 'node:net';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * Each client address holds at most its share of the server-wide body budget
 * (SVC_HTTP_BODY_BUDGET_PER_CLIENT_BYTES): one address announcing large bodies and stalling fills
 * its own share, and the large bodies of other addresses are still read. Two addresses on one
 * machine: the client's socket is bound to 127.0.0.2 (Linux answers all of 127.0.0.0/8), so the
 * server sees the real socket address, not a header.
 */
const KiB = 1024;
const MiB = 1024 * KiB;
const SHARE = MiB;
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({
    env: {
      // 4 MiB server-wide, its last eighth kept for small bodies: 3.5 MiB for large ones, 1 MiB per address.
      SVC_HTTP_BODY_BUDGET_BYTES: String(4 * MiB),
      SVC_HTTP_BODY_BUDGET_PER_CLIENT_BYTES: String(SHARE),
      SVC_HTTP_BODY_TIMEOUT_MS: '20000',
    },
  });
});
test.after.always(async () => {
  await svc?.close();
});

interface Sent {
  socket: Socket;
  /** The whole answer once the server has written one. */
  received: () => string;
  status: () => number | undefined;
}

/** POSTs to /mcp from `localAddress`, announcing `declared` bytes and sending `body` (all of them, or a first byte and then nothing). */
function post(localAddress: string, declared: number, body: Buffer): Promise<Sent> {
  const { hostname, port } = new URL(svc.baseUrl);
  const socket = connect({ port: Number(port), host: hostname, localAddress });
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => {});
  return new Promise((resolve) =>
    socket.once('connect', () => {
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${declared}\r\n\r\n`,
      );
      socket.write(body);
      const status = () => (received ? Number(received.split(' ', 2)[1]) : undefined);
      resolve({ socket, received: () => received, status });
    }),
  );
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const codeOf = (sent: Sent) => (JSON.parse(sent.received().split('\r\n\r\n')[1]!) as { code?: string; error?: { data?: { code?: string } } }).error?.data?.code;

test('one address fills its share of the body budget and is refused past it; another address still gets a body of its whole share read', async (t) => {
  // Eight bodies of 512 KiB from 127.0.0.1, each one byte sent: its share holds two (exactly 1 MiB).
  const stalled: Sent[] = [];
  for (let index = 0; index < 8; index += 1) {
    stalled.push(await post('127.0.0.1', SHARE / 2, Buffer.from('{')));
    // One at a time, so which ones are refused does not depend on the order they arrive in.
    await waitUntil('an answer', () => stalled.at(-1)!.status() !== undefined, { timeoutMs: 400 }).catch(() => undefined);
  }
  t.teardown(() => stalled.forEach(({ socket }) => socket.destroy()));
  const statuses = stalled.map(({ status }) => status() ?? 'reading');
  t.deepEqual(statuses, ['reading', 'reading', 503, 503, 503, 503, 503, 503], 'the share holds exactly two; the third is one byte past it');
  t.regex(stalled[2]!.received(), /retry-after: 1/i);
  t.is(codeOf(stalled[2]!), 'body_budget_full');

  // A body of exactly one share from another address is read and answered by MCP itself.
  const padding = 'x'.repeat(SHARE - 200);
  const rpc = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { padding } } });
  const body = Buffer.from(rpc.padEnd(SHARE, ' '));
  t.is(body.length, SHARE);
  const other = await post('127.0.0.2', SHARE, body);
  t.teardown(() => other.socket.destroy());
  await waitUntil('an answer to the whole body', () => other.status() !== undefined, { timeoutMs: 15_000 });
  t.not(other.status(), 503, other.received().slice(0, 400));
  t.true(other.status()! < 500, other.received().slice(0, 400));

  // The refused address gets its share back as its bodies end.
  stalled.forEach(({ socket }) => socket.destroy());
  await settle(300);
  const again = await post('127.0.0.1', SHARE, body);
  t.teardown(() => again.socket.destroy());
  await waitUntil('an answer to the whole body', () => again.status() !== undefined, { timeoutMs: 15_000 });
  t.true(again.status()! < 500, again.received().slice(0, 400));
});
