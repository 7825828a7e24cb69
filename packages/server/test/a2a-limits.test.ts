import test from 'ava';
import { a2aLimits } from '@svc/schemas';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';

/** Every bound of A2A with a credential at its edge: N passes, N+1 is refused. Serial: two tests count the stalled downloads. */
const certificate = selfSignedCertificate(['pdf.test']);
let svc: TestServer;
let source: HttpsSource;
/** Requests to the stalling PDF source still open. */
let stalled = 0;

test.before(async () => {
  source = await startHttpsSource(certificate, {
    '/stall.pdf': (_request, response) => {
      stalled++;
      response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': '100000' });
      response.write('%PDF-1.4\n');
      response.on('close', () => stalled--);
    },
  });
  const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
  svc = await startTestServer({
    env: { SVC_PDF_FETCH_TIMEOUT_MS: '60000', SVC_PDF_RATE_LIMIT: '0' },
    testSeams: { pdfSourceFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
  });
});
test.after.always(async () => {
  await svc?.close();
  await source?.close();
});

/** A developer key of a fresh agent: each test counts its own tasks. */
async function freshKey(): Promise<string> {
  const agent = await signInAgent(svc);
  return (await createKey(agent.client, ['inference:invoke'])).secret;
}

async function rpc(token: string, body: unknown | string) {
  const response = await fetch(`${svc.baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const send = (parts: unknown[], metadata: Record<string, unknown> = {}, configuration?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 'l',
  method: 'message/send',
  params: { message: { messageId: `m-${Math.random()}`, role: 'user', parts, metadata }, ...(configuration ? { configuration } : {}) },
});

test.serial(`a message holds at most ${a2aLimits.maxParts} parts`, async (t) => {
  const key = await freshKey();
  const text = (count: number) => Array.from({ length: count }, (_, index) => ({ kind: 'text', text: `The ${index}th sentence is here.` }));
  const atCap = await rpc(key, send(text(a2aLimits.maxParts), { skill: 'summarize' }));
  t.is(atCap.status, 200);
  t.is(atCap.body.result.status.state, 'completed');
  const over = await rpc(key, send(text(a2aLimits.maxParts + 1), { skill: 'summarize' }));
  t.is(over.status, 400);
  t.is(over.body.error.code, -32602);
  t.regex(over.body.error.message, /at most 16 parts/);
});

test.serial(`with a credential the body is at most ${a2aLimits.bodyBytes} bytes`, async (t) => {
  const key = await freshKey();
  const base = JSON.stringify(send([{ kind: 'text', text: '' }]));
  const atCap = base.replace('"text":""', `"text":"${'a'.repeat(a2aLimits.bodyBytes - base.length)}"`);
  t.is(Buffer.byteLength(atCap), a2aLimits.bodyBytes);
  const accepted = await rpc(key, atCap);
  t.is(accepted.status, 200, 'read whole (no skill named: the trial task)');
  const over = await rpc(key, atCap.replace('"text":"a', '"text":"aa'));
  t.is(over.status, 413);
  t.is(over.body.error.data.code, 'payload_too_large');
});

test.serial(`at most ${a2aLimits.maxRunningPerPrincipal} running tasks per caller; a canceled one frees its place`, async (t) => {
  const key = await freshKey();
  const stallingPdf = () =>
    rpc(key, send([{ kind: 'file', file: { uri: `https://pdf.test:${source.port}/stall.pdf` } }], { skill: 'pdf-extract' }, { blocking: false }));
  const running = [];
  for (let index = 0; index < a2aLimits.maxRunningPerPrincipal; index++) {
    const answer = await stallingPdf();
    t.is(answer.status, 200, JSON.stringify(answer.body));
    t.is(answer.body.result.status.state, 'working');
    running.push(answer.body.result.id as string);
  }
  const refused = await stallingPdf();
  t.is(refused.status, 429);
  t.is(refused.body.error.data.code, 'a2a_tasks_running');
  // Another caller is not held back by this one's tasks.
  const other = await rpc(await freshKey(), send([{ kind: 'text', text: 'One sentence. Another one.' }], { skill: 'summarize' }));
  t.is(other.body.result.status.state, 'completed');
  const canceled = await rpc(key, { jsonrpc: '2.0', id: 'c', method: 'tasks/cancel', params: { id: running[0] } });
  t.is(canceled.body.result.status.state, 'canceled');
  const next = await stallingPdf();
  t.is(next.status, 200);
  running.push(next.body.result.id);
  for (const id of running.slice(1)) await rpc(key, { jsonrpc: '2.0', id: 'c', method: 'tasks/cancel', params: { id } });
  await waitUntil('every stalled download was aborted', () => stalled === 0, { timeoutMs: 10_000 });
});

test.serial(`20 background tasks sent at once: exactly ${a2aLimits.maxRunningPerPrincipal} run, the rest get 429`, async (t) => {
  const key = await freshKey();
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      rpc(key, send([{ kind: 'file', file: { uri: `https://pdf.test:${source.port}/stall.pdf` } }], { skill: 'pdf-extract' }, { blocking: false })),
    ),
  );
  const accepted = answers.filter((answer) => answer.status === 200);
  t.is(accepted.length, a2aLimits.maxRunningPerPrincipal);
  t.true(answers.filter((answer) => answer.status === 429).every((answer) => answer.body.error.data.code === 'a2a_tasks_running'));
  t.is(answers.filter((answer) => answer.status === 429).length, 20 - a2aLimits.maxRunningPerPrincipal);
  for (const answer of accepted) await rpc(key, { jsonrpc: '2.0', id: 'c', method: 'tasks/cancel', params: { id: answer.body.result.id } });
  await waitUntil('every stalled download was aborted', () => stalled === 0, { timeoutMs: 10_000 });
});

test.serial(`a caller keeps at most ${a2aLimits.maxKeptPerPrincipal} tasks: the oldest goes first`, async (t) => {
  const key = await freshKey();
  const ids: string[] = [];
  for (let index = 0; index <= a2aLimits.maxKeptPerPrincipal; index++) {
    const answer = await rpc(key, send([{ kind: 'data', data: { query: 'x', documents: ['x'] } }], { skill: 'rerank' }));
    ids.push(answer.body.result.id);
  }
  const get = (id: string) => rpc(key, { jsonrpc: '2.0', id: 'g', method: 'tasks/get', params: { id } });
  t.is((await get(ids[0]!)).body.error?.code, -32001, 'the oldest of 101 is gone');
  t.is((await get(ids[1]!)).body.result.status.state, 'completed', 'the other 100 stay');
  t.is((await get(ids.at(-1)!)).body.result.status.state, 'completed');
});

test.serial('a message in a body of at most 65,536 bytes is kept in its task; one byte more keeps a note', async (t) => {
  const key = await freshKey();
  const base = JSON.stringify(send([{ kind: 'text', text: '' }], { skill: 'summarize' }));
  const sentences = 'The state lives in PostgreSQL. '.repeat(3000);
  const atCap = base.replace('"text":""', `"text":"${sentences.slice(0, 65_536 - base.length)}"`);
  t.is(Buffer.byteLength(atCap), 65_536);
  const history = async (body: string) => {
    const answer = await rpc(key, body);
    t.is(answer.body.result.status.state, 'completed');
    const got = await rpc(key, { jsonrpc: '2.0', id: 'g', method: 'tasks/get', params: { id: answer.body.result.id } });
    return got.body.result.history[0].parts[0].text as string;
  };
  t.is((await history(atCap)).length, 65_536 - base.length, 'kept whole');
  const over = atCap.replace('"text":"T', '"text":"TT');
  t.is(await history(over), '(The message came in a body of 65537 bytes; over 65536 bytes its parts are not kept.)');
});

test.serial('a blocking call whose caller goes away cancels its task and aborts the work, as a REST disconnect does', async (t) => {
  const key = await freshKey();
  const controller = new AbortController();
  const call = fetch(`${svc.baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(send([{ kind: 'file', file: { uri: `https://pdf.test:${source.port}/stall.pdf` } }], { skill: 'pdf-extract' })),
    signal: controller.signal,
  }).catch((error: unknown) => error);
  await waitUntil('the PDF download started', () => stalled === 1, { timeoutMs: 10_000 });
  controller.abort();
  await call;
  await waitUntil('the download was aborted with the call', () => stalled === 0, { timeoutMs: 10_000 });
  // Its place among the caller's running tasks is free again: four more can run.
  const more = await Promise.all(
    Array.from({ length: a2aLimits.maxRunningPerPrincipal }, () =>
      rpc(key, send([{ kind: 'text', text: 'One sentence. Another one.' }], { skill: 'summarize' })),
    ),
  );
  t.deepEqual(
    more.map((answer) => answer.body.result.status.state),
    Array.from({ length: a2aLimits.maxRunningPerPrincipal }, () => 'completed'),
  );
});
