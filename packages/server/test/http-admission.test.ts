import { connect, type Socket } from 'node:net';
import test from 'ava';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * Admission before bytes: a route's admission (its queue, its rate limit, auth) and the server's
 * budget of bodies in flight are decided from the request head, so callers who announce large
 * bodies and stall are refused at once instead of each holding a buffer until a deadline.
 */
const MiB = 1024 * 1024;
let pdfServer: TestServer;
let budgetServer: TestServer;
/** A short server-wide body deadline, for the test that waits for it; the budget server's is long, since its stalled bodies must all be pending at once. */
let deadlineServer: TestServer;
let pdfToken: string;
let budgetToken: string;
test.before(async () => {
  [pdfServer, budgetServer, deadlineServer] = await Promise.all([
    startTestServer({ env: { SVC_PDF_WORKERS: '1', SVC_PDF_MAX_PENDING: '1', SVC_PDF_RATE_LIMIT: '0' } }),
    // Opening 12 connections and writing 4 MiB to each took more than 1.5 s at load 16: the first bodies were cut off (408) and freed budget for later ones.
    // One address may hold the whole budget here: this server measures the server-wide budget (each address's share: http-body-budget-per-client.test.ts).
    startTestServer({
      env: {
        SVC_HTTP_BODY_BUDGET_BYTES: String(16 * MiB),
        SVC_HTTP_BODY_BUDGET_PER_CLIENT_BYTES: String(16 * MiB),
        SVC_HTTP_BODY_TIMEOUT_MS: '15000',
        SVC_PDF_RATE_LIMIT: '1',
        // A fixed window: with a minute's, the two uploads straddled its turn once in a clean CI run
        // (both admitted, "reading, reading"). A day's turns at midnight UTC only.
        SVC_PDF_RATE_WINDOW_SECONDS: '86400',
      },
    }),
    startTestServer({ env: { SVC_HTTP_BODY_TIMEOUT_MS: '1500' } }),
  ]);
  [pdfToken, budgetToken] = await Promise.all([signInAgent(pdfServer), signInAgent(budgetServer)].map(async (agent) => (await agent).session.accessToken));
});
test.after.always(async () => {
  await Promise.all([pdfServer?.close(), budgetServer?.close(), deadlineServer?.close()]);
});

interface Stalled {
  socket: Socket;
  /** The status line once the server answered, or undefined while it is still reading. */
  answer: () => string | undefined;
  received: () => string;
  /** Resolves when every byte given has been handed to the kernel, or the server closed. */
  written: Promise<void>;
}

/** Announces `declared` bytes, sends `sent` of them, and stalls. */
function announceAndStall(server: TestServer, head: string, declared: number, sent: Buffer): Promise<Stalled> {
  const { hostname, port } = new URL(server.baseUrl);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => {});
  return new Promise((resolve) =>
    socket.once('connect', () => {
      socket.write(`${head}Content-Length: ${declared}\r\n\r\n`);
      const written = new Promise<void>((done) => {
        socket.write(sent, () => done());
        socket.once('close', () => done());
      });
      resolve({ socket, answer: () => (received ? received.split('\r\n', 1)[0] : undefined), received: () => received, written });
    }),
  );
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test.serial(
  '30 PDF uploads announcing 16 MiB and stopping one byte short: the queue admits 2, refuses the rest before reading, and memory stays bounded',
  async (t) => {
    const size = 16 * MiB;
    // One buffer for every socket: the client side copies nothing, so what grows is the server.
    const almost = Buffer.alloc(size - 1, 0x25);
    const head = `POST /v1/pdf/extract/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${pdfToken}\r\nContent-Type: application/pdf\r\n`;
    globalThis.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const stalled = await Promise.all(Array.from({ length: 30 }, () => announceAndStall(pdfServer, head, size, almost)));
    t.teardown(() => stalled.forEach(({ socket }) => socket.destroy()));
    await Promise.all(stalled.map(({ written }) => written));
    await settle(200);
    const refused = stalled.filter(({ answer }) => answer()?.startsWith('HTTP/1.1 503'));
    t.is(refused.length, 28, stalled.map(({ answer }) => answer() ?? 'reading').join(', '));
    for (const { received } of refused) t.is(JSON.parse(received().split('\r\n\r\n')[1]!).code, 'pdf_queue_full');
    const growthMiB = (process.memoryUsage().rss - rssBefore) / MiB;
    // Unbounded, 30 bodies of 16 MiB took ~480 MiB; two admitted hold ~32 MiB (twice that while copied).
    t.true(growthMiB < 200, `rss grew ${Math.round(growthMiB)} MiB`);
    // Others are served meanwhile.
    t.is((await fetch(`${pdfServer.baseUrl}/healthz`)).status, 200);
  },
);

test.serial(
  'the document route takes its parser queue place before its body: with the queue full it is refused at once, and served once places are free',
  async (t) => {
    // The pool here holds 2 (1 worker, 1 waiting): two stalled PDF uploads hold both places.
    const pdfHead = `POST /v1/pdf/extract/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${pdfToken}\r\nContent-Type: application/pdf\r\n`;
    const holders = await Promise.all([1, 2].map(() => announceAndStall(pdfServer, pdfHead, MiB, Buffer.from('%PDF-1.7\n'))));
    t.teardown(() => holders.forEach(({ socket }) => socket.destroy()));
    await settle(300);
    t.deepEqual(
      holders.map(({ answer }) => answer()),
      [undefined, undefined],
      'both uploads are admitted and still being read',
    );
    const documentHead = `POST /v1/document/extract HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${pdfToken}\r\nContent-Type: application/json\r\n`;
    const document = await announceAndStall(pdfServer, documentHead, MiB, Buffer.from('{"data_base64":"'));
    t.teardown(() => document.socket.destroy());
    await settle(300);
    t.is(document.answer(), 'HTTP/1.1 503 Service Unavailable', 'refused from its head, not after its body');
    t.is(JSON.parse(document.received().split('\r\n\r\n')[1]!).code, 'pdf_queue_full');

    // The places come back when the uploads go, and each document gives its own back.
    holders.forEach(({ socket }) => socket.destroy());
    await settle(300);
    for (const attempt of [1, 2, 3]) {
      const response = await fetch(`${pdfServer.baseUrl}/v1/document/extract`, {
        method: 'POST',
        headers: { authorization: `Bearer ${pdfToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: '<h1>Title</h1><p>body</p>', format: 'html' }),
      });
      t.is(response.status, 200, `attempt ${attempt}: ${await response.text()}`);
    }
  },
);

test.serial(
  'the server-wide body budget: bodies past it are refused at once with 503 body_budget_full and Retry-After; a small request still gets through',
  async (t) => {
    const size = 4 * MiB;
    const almost = Buffer.alloc(size - 1, 0x20);
    const head = `POST /v1/embeddings HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${budgetToken}\r\nContent-Type: application/json\r\n`;
    const stalled = await Promise.all(Array.from({ length: 12 }, () => announceAndStall(budgetServer, head, size, almost)));
    t.teardown(() => stalled.forEach(({ socket }) => socket.destroy()));
    const answers = () => stalled.map(({ answer }) => answer() ?? 'reading').join(', ');
    const refusedNow = () => stalled.filter(({ answer }) => answer()?.startsWith('HTTP/1.1 503'));
    // The refusals come at once, but on a loaded machine not all within a fixed pause: wait for
    // the ninth, then a moment more, so a tenth refusal (a budget too small) would show too.
    await waitUntil(answers, () => refusedNow().length >= 9, { timeoutMs: 10_000 }).catch(() => undefined);
    await settle(300);
    const refused = refusedNow();
    // 16 MiB of budget less its small-body reserve (2 MiB) holds three bodies of 4 MiB.
    t.is(refused.length, 9, answers());
    const [headers, body] = refused[0]!.received().split('\r\n\r\n');
    t.regex(headers!, /retry-after: 1/i);
    t.is(JSON.parse(body!).code, 'body_budget_full');
    const small = await fetch(`${budgetServer.apiUrl}/api/v1/blackboard/put`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'edge:budget', value: { text: 'through' } }),
    });
    t.is(small.status, 201, await small.text());
  },
);

test.serial('every route has a body deadline: a body trickled to a route with none of its own is cut off with 408', async (t) => {
  const stalled = await announceAndStall(
    deadlineServer,
    'POST /api/v1/blackboard/put HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n',
    100,
    Buffer.from('{"key":'),
  );
  const closed = new Promise<void>((resolve) => stalled.socket.once('close', () => resolve()));
  await closed;
  t.is(stalled.answer(), 'HTTP/1.1 408 Request Timeout');
  t.is(JSON.parse(stalled.received().split('\r\n\r\n')[1]!).code, 'request_timeout');
});

test.serial('the PDF rate limit is decided before the body: of two uploads with a limit of one, one is 429 while the other is still arriving', async (t) => {
  const head = `POST /v1/pdf/extract/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${budgetToken}\r\nContent-Type: application/pdf\r\n`;
  const first = await announceAndStall(budgetServer, head, MiB, Buffer.from('%PDF-1.7\n'));
  t.teardown(() => first.socket.destroy());
  await settle(300); // the first is usually admitted first; what is asserted holds whichever is
  const second = await announceAndStall(budgetServer, head, MiB, Buffer.from('%PDF-1.7\n'));
  t.teardown(() => second.socket.destroy());
  // The refusal comes at once; the admitted one's body would only be cut off at the body deadline (15 s).
  const uploads = [first, second];
  const state = () => uploads.map((upload) => upload.answer() ?? 'reading').join(', ');
  const [refused] = await waitUntil(state, () => {
    const answered = uploads.filter((upload) => upload.answer() !== undefined);
    return answered.length > 0 && answered;
  });
  const admitted = uploads.find((upload) => upload !== refused)!;
  t.is(refused!.answer(), 'HTTP/1.1 429 Too Many Requests', state());
  t.is(JSON.parse(refused!.received().split('\r\n\r\n')[1]!).code, 'rate_limited');
  t.is(admitted.answer(), undefined, `the other is admitted and still being read: ${state()}`);
});
