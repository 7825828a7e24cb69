import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { startTestServer } from '@svc/testing/test-server';
import { slowPdf } from '@svc/testing/pdf-fixtures';

/**
 * A drain as SIGTERM starts it (`server.close()`, which the binary calls on the signal): readiness
 * fails at once, an open event stream gets a final `server_shutting_down` event and closes, a
 * request in flight finishes, and after the grace period new connections are refused; all well
 * before the shutdown timeout.
 */
const GRACE_MS = 1500;
const SHUTDOWN_TIMEOUT_MS = 20_000;

/** A POST whose JSON body trickles in over a raw socket, so it is in flight when the drain begins. */
function trickledRegistration(baseUrl: string) {
  const { hostname, port } = new URL(baseUrl);
  const body = JSON.stringify({ redirect_uris: ['http://127.0.0.1:53682/callback'], client_name: 'in flight during the drain' });
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const started = (async () => {
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /oauth/register HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
  })();
  return {
    started,
    async finish() {
      for (let offset = 10; offset < body.length; offset += 20) {
        await sleep(100);
        socket.write(body.slice(offset, offset + 20));
      }
      await closed;
      return received;
    },
  };
}

test('drain: readyz 503 at once, SSE ends with a final event, in-flight finishes, then new connections are refused', async (t) => {
  const svc = await startTestServer({
    env: { SVC_SHUTDOWN_GRACE_MS: String(GRACE_MS), SVC_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), SVC_PDF_WORKERS: '1' },
  });
  let closed = false;
  t.teardown(async () => {
    if (!closed) await svc.close();
  });
  t.is((await fetch(`${svc.baseUrl}/readyz`)).status, 200);

  // A long event stream: one slow page after another.
  const stream = await fetch(`${svc.baseUrl}/v1/pdf/extract`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ data_base64: slowPdf(60, 20_000).toString('base64'), stream: true }),
  });
  t.is(stream.status, 200);
  t.regex(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
  let events = '';
  while (!events.includes('event: page-extracted')) {
    const { value, done } = await reader.read();
    if (done) break;
    events += value;
  }
  t.regex(events, /event: page-extracted/, 'the stream is open and producing');
  const inFlight = trickledRegistration(svc.baseUrl);
  await inFlight.started;

  const drainStarted = performance.now();
  const closing = svc.server.close().then(() => ((closed = true), performance.now()));
  const ready = await fetch(`${svc.baseUrl}/readyz`);
  t.is(ready.status, 503, 'readiness fails at once');
  t.is(((await ready.json()) as { status: string }).status, 'draining');
  t.is(ready.headers.get('connection'), 'close', 'a draining server asks its clients to close');

  // The rest of the stream: a final event saying why, then the end.
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    events += value;
  }
  const last = events.trim().split('\n\n').at(-1)!;
  t.regex(last, /^event: error\ndata: /);
  const final = JSON.parse(last.split('data: ')[1]!) as { code: string; retryable: boolean };
  t.is(final.code, 'server_shutting_down');
  t.true(final.retryable);
  t.true(performance.now() - drainStarted < GRACE_MS, 'the stream ended at once, not at the shutdown timeout');

  const answer = await inFlight.finish();
  t.regex(answer, /^HTTP\/1\.1 201 /, 'the request in flight finished');

  const finishedAt = await closing;
  t.true(finishedAt - drainStarted < SHUTDOWN_TIMEOUT_MS / 2, `drained in ${Math.round(finishedAt - drainStarted)} ms`);
  const refused = await fetch(`${svc.baseUrl}/healthz`).then(
    () => 'answered',
    (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.message,
  );
  t.is(refused, 'ECONNREFUSED', 'new connections are refused');
  await svc.database.drop();
});
