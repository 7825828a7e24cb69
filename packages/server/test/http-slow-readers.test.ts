import { connect, type Socket } from 'node:net';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * A client that asks for large answers and never reads them must not hold the server's buffers
 * and its socket for ever: a connection with bytes waiting that takes none of them for
 * SVC_HTTP_RESPONSE_STALL_MS is destroyed. A connection merely idle is left alone.
 */
const STALL_MS = 600;
let svc: TestServer;
test.before(async () => {
  // One address may hold the whole answer budget here: this file measures the stall deadline (each address's share: http-answer-budget.test.ts).
  svc = await startTestServer({ env: { SVC_HTTP_RESPONSE_STALL_MS: String(STALL_MS), SVC_HTTP_ANSWER_BUDGET_PER_CLIENT_BYTES: String(128 * 1024 * 1024) } });
});
test.after.always(async () => {
  await svc?.close();
});

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function open(): Promise<Socket> {
  const { hostname, port } = new URL(svc.baseUrl);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  return new Promise((resolve) => socket.once('connect', () => resolve(socket)));
}

/** Reads what is left: the bytes that arrive until the server closes, or until `expected` arrived. */
function drain(socket: Socket, expected: number, waitMs: number): Promise<{ bytes: number; closed: boolean }> {
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = (closed: boolean) => resolve({ bytes, closed });
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.byteLength;
      if (bytes >= expected) {
        clearTimeout(timer);
        finish(false);
      }
    });
    socket.once('close', () => {
      clearTimeout(timer);
      finish(true);
    });
    socket.resume();
  });
}

test('clients that ask for ~20 MB of answers and never read are cut off at the stall deadline', async (t) => {
  const one = (await (await fetch(`${svc.baseUrl}/openapi.json`)).arrayBuffer()).byteLength;
  const requests = Math.ceil((20 * 1024 * 1024) / one);
  const sockets = await Promise.all(Array.from({ length: 3 }, open));
  t.teardown(() => sockets.forEach((socket) => socket.destroy()));
  for (const socket of sockets) {
    socket.pause();
    socket.write(`GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`.repeat(requests));
  }
  // Long enough for the server to answer requests until the kernel's buffers are full, then see no
  // progress for STALL_MS. Reading any sooner is progress and the stall never comes: at load 7 (two
  // suites at once) 4 x STALL_MS was not enough.
  await settle(STALL_MS * 4 + 6_000);
  const outcomes = await Promise.all(sockets.map((socket) => drain(socket, requests * one, 10_000)));
  for (const { bytes, closed } of outcomes) {
    t.true(closed, 'the server closed the stalled connection');
    t.true(bytes < requests * one, `read ${bytes} of ${requests * one} bytes before the close`);
  }
  t.is((await fetch(`${svc.baseUrl}/healthz`)).status, 200);
});

test('an idle keep-alive connection, and a slow but steady reader, are not stalls', async (t) => {
  const idle = await open();
  t.teardown(() => idle.destroy());
  idle.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await settle(STALL_MS * 3);
  // Still open: it answers a second request.
  const second = new Promise<string>((resolve) => {
    let text = '';
    idle.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.split('HTTP/1.1 200').length > 2) resolve(text);
    });
  });
  idle.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  t.regex(await second, /HTTP\/1\.1 200[\s\S]*HTTP\/1\.1 200/);

  // A reader that reads for a moment every third of the deadline, then stops again, gets every
  // answer (the deadline is on progress, not on the whole answer).
  const one = (await (await fetch(`${svc.baseUrl}/openapi.json`)).arrayBuffer()).byteLength;
  const slow = await open();
  t.teardown(() => slow.destroy());
  slow.pause();
  slow.write('GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(20));
  let bytes = 0;
  let closed = false;
  slow.on('data', (chunk: Buffer) => (bytes += chunk.byteLength));
  slow.pause();
  slow.once('close', () => (closed = true));
  while (bytes < 20 * one && !closed) {
    await settle(STALL_MS / 3);
    slow.resume();
    await settle(STALL_MS / 30);
    slow.pause();
  }
  t.false(closed, `the steady reader was cut off after ${bytes} bytes`);
  t.true(bytes >= 20 * one);
});
