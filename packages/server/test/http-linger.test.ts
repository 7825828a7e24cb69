import { connect } from 'node:net';
import test from 'ava';
import { LINGER_MAX_BYTES } from '../src/http/linger.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * An answer given before the body is read (413 from Content-Length, 401 before a scoped body)
 * must reach a client that is still sending: the server reads and discards what follows, within
 * a bound, as nginx's `lingering_close` does, instead of closing under the client (which turns
 * the answer into EPIPE or a reset on the client's side).
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

interface Exchange {
  received: string;
  error: string | undefined;
}

/**
 * Sends the whole request, then reads the answer, as a simple client does (curl with a file, a
 * script's `sendall` then `recv`): an answer can only be read if the connection outlives the send.
 */
function sendWhole(head: string, body: Buffer): Promise<Exchange> {
  const { hostname, port } = new URL(svc.baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let error: string | undefined;
    socket.setEncoding('latin1');
    const readAnswer = () =>
      socket.on('data', (chunk: string) => {
        received += chunk;
        // The answer is whole once its declared length has arrived: the connection may stay open.
        const [headers, payload] = received.split('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(headers ?? '')?.[1];
        if (payload !== undefined && length !== undefined && Buffer.byteLength(payload, 'latin1') >= Number(length)) socket.end();
      });
    socket.on('error', (cause: NodeJS.ErrnoException) => (error = cause.code));
    socket.on('close', () => resolve({ received, error }));
    socket.on('connect', () => {
      socket.write(head);
      socket.end(body, readAnswer);
    });
  });
}

test('a body over the cap sent whole gets its 413 every time, not a reset', async (t) => {
  const body = Buffer.alloc(16 * 1024 * 1024, 0x61);
  const head = `POST /oauth/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.byteLength}\r\n\r\n`;
  const outcomes: string[] = [];
  for (let round = 0; round < 20; round++) {
    const { received, error } = await sendWhole(head, body);
    outcomes.push(error ?? received.split('\r\n', 1)[0] ?? '');
  }
  t.deepEqual(
    outcomes,
    outcomes.map(() => 'HTTP/1.1 413 Payload Too Large'),
  );
});

test('a refusal before reading (401 on a scoped route) reaches a client still sending its body', async (t) => {
  const body = Buffer.alloc(2 * 1024 * 1024, 0x61);
  const head = `POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nIdempotency-Key: k\r\nContent-Length: ${body.byteLength}\r\n\r\n`;
  const outcomes: string[] = [];
  for (let round = 0; round < 10; round++) {
    const { received, error } = await sendWhole(head, body);
    outcomes.push(error ?? received.split('\r\n', 1)[0] ?? '');
  }
  t.deepEqual(
    outcomes,
    outcomes.map(() => 'HTTP/1.1 401 Unauthorized'),
  );
});

test('lingering is bounded: a client that never stops sending is cut off', async (t) => {
  const { hostname, port } = new URL(svc.baseUrl);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise((resolve) => socket.on('connect', resolve));
  socket.write(`POST /oauth/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${LINGER_MAX_BYTES * 4}\r\n\r\n`);
  const chunk = Buffer.alloc(256 * 1024, 0x61);
  let sent = 0;
  let open = true;
  void closed.then(() => (open = false));
  while (open && sent < LINGER_MAX_BYTES * 4) {
    if (!socket.write(chunk)) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
    sent += chunk.byteLength;
  }
  await closed;
  t.true(sent < LINGER_MAX_BYTES * 4, `cut off after ${sent} bytes`);
  t.regex(received, /^HTTP\/1\.1 413 /);
});
