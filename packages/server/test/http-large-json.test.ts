import net from 'node:net';
import test from 'ava';
import { bodyRules, pdfJsonBodyLimitBytes } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * JSON bodies over 1 MiB are read into one buffer and parsed in a worker thread
 * (http/json-body-pool.ts), not on the event loop. The answers must be the ones a body parsed
 * on the main thread gets: the same value, the same refusals with the same codes and paths,
 * whether the body came with a Content-Length or chunked.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const OFF_THREAD = 1_048_576;

interface Answer {
  status: number;
  body: { code?: string; char_count?: number; sections?: Array<{ text: string }>; detail?: Array<{ loc: Array<string | number> }> };
}

async function post(text: string | Uint8Array<ArrayBuffer>): Promise<Answer> {
  const response = await fetch(`${svc.baseUrl}/v1/document/extract`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}` },
    body: text,
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

/** The body sent chunked (no Content-Length), in pieces of `pieceBytes`, over a raw socket. */
async function postChunked(bytes: Buffer, pieceBytes: number): Promise<Answer> {
  const target = new URL(`${svc.baseUrl}/v1/document/extract`);
  const socket = net.connect({ host: target.hostname, port: Number(target.port) });
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\nauthorization: Bearer ${svc.operatorToken}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n`,
  );
  for (let at = 0; at < bytes.length; at += pieceBytes) {
    const piece = bytes.subarray(at, at + pieceBytes);
    socket.write(`${piece.length.toString(16)}\r\n`);
    socket.write(piece);
    socket.write('\r\n');
  }
  socket.write('0\r\n\r\n');
  const chunks: Buffer[] = [];
  // The server may answer (413) and close before every piece is written.
  socket.on('error', () => {});
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const answer = Buffer.concat(chunks).toString('utf8');
  const head = answer.slice(0, answer.indexOf('\r\n\r\n'));
  let payload = answer.slice(answer.indexOf('\r\n\r\n') + 4);
  // A chunked answer: its one chunk's size line and the terminator around the JSON.
  if (/transfer-encoding: chunked/i.test(head)) payload = payload.slice(payload.indexOf('\r\n') + 2, payload.lastIndexOf('}') + 1);
  return { status: Number(answer.slice(9, 12)), body: JSON.parse(payload) as Answer['body'] };
}

/** The most characters an extraction returns: the tests compare what comes back up to it. */
const MAX_CHARS = 400_000;
const returned = (answer: Answer) => answer.body.sections?.map((section) => section.text).join('') ?? '';
/** The first characters, short of where max_chars may cut a surrogate pair. */
const head = (text: string) => text.slice(0, MAX_CHARS - 8);

/** A text document of `bytes` UTF-8 bytes as the body, with characters of 1 to 4 bytes, so chunks cut through them. */
function documentOf(bytes: number): { body: string; text: string } {
  const frame = JSON.stringify({ text: '', format: 'text', max_chars: MAX_CHARS });
  const unit = 'aé€😀 '; // 1 + 2 + 3 + 4 + 1 bytes, 6 UTF-16 units
  let text = unit.repeat(Math.floor((bytes - Buffer.byteLength(frame)) / 11));
  while (Buffer.byteLength(frame) + Buffer.byteLength(text) < bytes) text += 'a';
  return { body: JSON.stringify({ text, format: 'text', max_chars: MAX_CHARS }), text };
}

test('a document body at 1 MiB (parsed here) and one byte past it (parsed in a worker) come back the same', async (t) => {
  for (const bytes of [OFF_THREAD, OFF_THREAD + 1, 3 * OFF_THREAD]) {
    const { body, text } = documentOf(bytes);
    t.is(Buffer.byteLength(body), bytes);
    const answer = await post(body);
    t.is(answer.status, 200, `${bytes}: ${JSON.stringify(answer.body).slice(0, 300)}`);
    t.is(head(returned(answer)), head(text), `${bytes} bytes`);
  }
});

test('a large body sent chunked, cut inside characters, is parsed whole; past the route cap it is a 413', async (t) => {
  for (const bytes of [4096, OFF_THREAD, 2 * OFF_THREAD]) {
    // Chunked, the size is known at the end: up to 1 MiB is parsed here, past it in the worker.
    const { body, text } = documentOf(bytes);
    const answer = await postChunked(Buffer.from(body), 65_537);
    t.is(answer.status, 200, `${bytes}: ${JSON.stringify(answer.body).slice(0, 300)}`);
    t.is(head(returned(answer)), head(text), `${bytes} bytes`);
  }
  const over = Buffer.from(JSON.stringify({ text: 'a'.repeat(pdfJsonBodyLimitBytes), format: 'text' }));
  const refused = await postChunked(over, 1 << 20);
  t.is(refused.status, 413, JSON.stringify(refused.body));
  t.is(refused.body.code, 'payload_too_large');
});

test('a large body keeps the refusals of a small one: malformed JSON, NUL, a lone surrogate (with their paths), nesting past the cap', async (t) => {
  const filler = 'a'.repeat(2 * OFF_THREAD);
  const malformed = await post(`{"text":"${filler}",}`);
  t.is(malformed.status, 400, JSON.stringify(malformed.body));
  t.is(malformed.body.code, 'malformed_json');
  const withNul = await post(`{"text":"${filler}","filename":"a\\u0000b"}`);
  t.is(withNul.status, 422, JSON.stringify(withNul.body));
  t.is(withNul.body.code, 'json_nul_character');
  t.deepEqual(withNul.body.detail?.[0]?.loc, ['body', 'filename']);
  const lone = await post(`{"text":"${filler}\\ud800"}`);
  t.is(lone.status, 422, JSON.stringify(lone.body));
  t.is(lone.body.code, 'json_lone_surrogate');
  t.deepEqual(lone.body.detail?.[0]?.loc, ['body', 'text']);
  const deep = `${'['.repeat(bodyRules.maxJsonDepth)}${']'.repeat(bodyRules.maxJsonDepth)}`;
  const tooDeep = await post(`{"text":"${filler}","n":[${deep}]}`);
  t.is(tooDeep.status, 422, JSON.stringify(tooDeep.body));
  t.is(tooDeep.body.code, 'json_too_deep');
  // Invalid UTF-8 decodes to U+FFFD, as it does on the main thread: the value is text, not an error.
  const invalid = new Uint8Array(Buffer.concat([Buffer.from('{"format":"text","text":"b'), Buffer.from([0xff, 0xfe]), Buffer.from(`${filler}"}`)]));
  const replaced = await post(invalid);
  t.is(replaced.status, 200, JSON.stringify(replaced.body).slice(0, 300));
  t.true(returned(replaced).startsWith('b\ufffd\ufffda'), returned(replaced).slice(0, 10));
});
