import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { AnswerBudget } from '../src/http/answer-budget.ts';

/**
 * Answers that clients never read are bounded server-wide, as bodies are: a large answer
 * (over 64 KiB) counts against SVC_HTTP_ANSWER_BUDGET_BYTES until the kernel has taken its last
 * byte, one client address holds at most its share of it, and past either a read's answer is
 * 503 `answer_budget_full` with Retry-After instead of another buffer held until the stall
 * deadline. Addresses are real socket addresses (127.0.0.x on loopback).
 */
const MiB = 1024 * 1024;
const SHARE = MiB;
const BUDGET = 4 * MiB;
let svc: TestServer;
let answerBytes: number;
test.before(async () => {
  svc = await startTestServer({
    env: {
      SVC_HTTP_ANSWER_BUDGET_BYTES: String(BUDGET),
      SVC_HTTP_ANSWER_BUDGET_PER_CLIENT_BYTES: String(SHARE),
      // Long: the unread answers must still be pending when the test looks.
      SVC_HTTP_RESPONSE_STALL_MS: '60000',
    },
  });
  answerBytes = (await (await fetch(`${svc.baseUrl}/openapi.json`)).arrayBuffer()).byteLength;
});
test.after.always(async () => {
  await svc?.close();
});

/** GET `path` from a socket bound to `localAddress`, read whole. */
function getFrom(localAddress: string, path: string): Promise<{ status: number; retryAfter: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const call = request(`${svc.baseUrl}${path}`, { localAddress, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, retryAfter: response.headers['retry-after'], body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    call.on('error', reject);
    call.end();
  });
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A connection from `localAddress` that asks for `/openapi.json` `count` times at once (pipelined) and reads nothing. */
function neverReading(localAddress: string, count: number): Promise<Socket> {
  const { hostname, port } = new URL(svc.baseUrl);
  const socket = connect({ port: Number(port), host: hostname, localAddress });
  socket.on('error', () => {});
  return new Promise((resolve) =>
    socket.once('connect', () => {
      socket.pause();
      socket.write(`GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`.repeat(count));
      resolve(socket);
    }),
  );
}

/** Reads a paused connection for `ms` and counts the answers' status lines (the JSON answers hold no CRLF). */
function statusesRead(socket: Socket, ms: number): Promise<string[]> {
  // A refusal is counted with its Retry-After: `503 answer_budget_full` only when it has one.
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    socket.resume();
    setTimeout(
      () =>
        resolve(
          [...text.matchAll(/HTTP\/1\.1 (\d{3}) [^\r]*\r\n((?:[^\r]+\r\n)*)\r\n(\{"error[^}]*\})?/g)].map(([, status, headers, error]) =>
            error && /^retry-after: 1\r$/im.test(headers!) ? `${status} ${JSON.parse(error).code}` : error ? `${status} without Retry-After` : status!,
          ),
        ),
      ms,
    );
  });
}

test('the answer budget: one client takes its share and no more, exactly at the edge; the server its budget', (t) => {
  const budget = new AnswerBudget(4 * MiB, MiB);
  const release = budget.hold(MiB - 1, '127.0.0.1');
  budget.hold(1, '::ffff:127.0.0.1');
  const error = t.throws(() => budget.hold(1, '127.0.0.1'));
  t.is((error as { code?: string }).code, 'answer_budget_full');
  // IPv6 addresses of one /64 are one client.
  budget.hold(MiB, '2001:db8:1:2::1');
  t.throws(() => budget.hold(1, '2001:db8:1:2:ffff::9'));
  budget.hold(MiB, '2001:db8:1:3::1');
  // The server's whole budget: 3 MiB held, one more MiB fits, one byte past it does not.
  budget.hold(MiB, '10.0.0.1');
  t.throws(() => budget.hold(1, '10.0.0.2'));
  release();
  t.notThrows(() => budget.hold(MiB - 1, '10.0.0.3'));
});

test('an answer larger than a share is served to a client holding nothing, and one larger than the budget while the server holds nothing', (t) => {
  const budget = new AnswerBudget(4 * MiB, MiB);
  const huge = budget.hold(12 * MiB, '10.0.0.1');
  t.throws(() => budget.hold(65 * 1024, '10.0.0.1'), undefined, 'its client holds one already');
  t.throws(() => budget.hold(65 * 1024, '10.0.0.2'), undefined, 'the server is past its budget');
  huge();
  t.notThrows(() => budget.hold(2 * MiB, '10.0.0.2'));
});

test.serial(
  'a client pipelining large reads it never reads gets 503 answer_budget_full past its share, with Retry-After; another address is served meanwhile',
  async (t) => {
    t.log(`the OpenAPI document: ${answerBytes} bytes`);
    t.true(answerBytes > 64 * 1024 && answerBytes <= SHARE / 2, `the OpenAPI document is ${answerBytes} bytes`);
    const held = Math.floor(SHARE / answerBytes);
    const pipelined = 12;
    const greedy = await neverReading('127.0.0.1', pipelined);
    t.teardown(() => greedy.destroy());
    await settle(1000);
    // Another address is served while the first holds its share.
    const other = await getFrom('127.0.0.2', '/openapi.json');
    t.is(other.status, 200);
    t.is(other.body.byteLength, answerBytes);

    // What the first was answered: as many as its share holds, then 503s with Retry-After.
    const answers = await statusesRead(greedy, 2000);
    t.deepEqual(answers, [...Array<string>(held).fill('200'), ...Array<string>(pipelined - held).fill('503 answer_budget_full')]);
    // Its answers taken, it is served again.
    greedy.destroy();
    t.is((await getFrom('127.0.0.1', '/openapi.json')).status, 200);
  },
);
