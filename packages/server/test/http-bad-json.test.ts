import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { bodyRules } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * JSON the edge refuses for every route, before a handler sees it: nesting past the depth cap,
 * NUL and lone surrogates in any string (PostgreSQL text and jsonb hold neither). Each surface
 * answers in its own error shape with a stable code; before the edge did this, these were 500s
 * (a failed insert, a recursion past the stack) or, for a key name, stored.
 */
let svc: TestServer;
let bearer: string;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on', SVC_OAUTH_TOKEN_RATE_PER_MINUTE: '100000' } });
  bearer = (await signInAgent(svc)).session.accessToken;
});
test.after.always(async () => {
  await svc?.close();
});

interface Answer {
  status: number;
  body: { code?: string; error?: unknown; detail?: Array<{ loc: Array<string | number>; type: string }>; jsonrpc?: string };
}

async function post(url: string, text: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}`, ...headers },
    body: text,
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

const nested = (levels: number, inner = '1') => '['.repeat(levels) + inner + ']'.repeat(levels);

test('a blackboard value with a lone surrogate is a 422 json_lone_surrogate naming its path, in the api surface shape', async (t) => {
  const answer = await post(`${svc.apiUrl}/api/v1/blackboard/put`, JSON.stringify({ key: 'edge:surrogate', value: { text: 'x\ud800y' } }));
  t.is(answer.status, 422, JSON.stringify(answer.body));
  t.is(answer.body.code, 'json_lone_surrogate');
  t.is(typeof answer.body.error, 'string');
  t.deepEqual(answer.body.detail?.[0]?.loc, ['body', 'value', 'text']);
  // A proper pair (an emoji) is fine.
  t.is((await post(`${svc.apiUrl}/api/v1/blackboard/put`, JSON.stringify({ key: 'edge:pair', value: { text: 'ok \ud83d\ude00' } }))).status, 201);
});

test('3,000 nested arrays in a blackboard value are a 422 json_too_deep; the cap itself is accepted', async (t) => {
  const deep = await post(`${svc.apiUrl}/api/v1/blackboard/put`, `{"key":"edge:deep","value":{"text":"deep","n":${nested(3000)}}}`);
  t.is(deep.status, 422, JSON.stringify(deep.body));
  t.is(deep.body.code, 'json_too_deep');
  // The body object and the value object are two levels: the arrays take the rest of the cap.
  const atCap = await post(`${svc.apiUrl}/api/v1/blackboard/put`, `{"key":"edge:at-cap","value":{"text":"deep","n":${nested(bodyRules.maxJsonDepth - 2)}}}`);
  t.is(atCap.status, 201, JSON.stringify(atCap.body));
  const overCap = await post(
    `${svc.apiUrl}/api/v1/blackboard/put`,
    `{"key":"edge:over-cap","value":{"text":"deep","n":${nested(bodyRules.maxJsonDepth - 1)}}}`,
  );
  t.is(overCap.body.code, 'json_too_deep');
  // Brackets inside strings are text, not nesting.
  t.is((await post(`${svc.apiUrl}/api/v1/blackboard/put`, JSON.stringify({ key: 'edge:brackets', value: { text: `[{"\\${'['.repeat(200)}` } }))).status, 201);
});

test('a job item holding NUL, or nested 3,000 deep, is a 422 naming the item, not a 500', async (t) => {
  const withNul = await post(
    `${svc.baseUrl}/v1/jobs`,
    JSON.stringify({ schema: 'svc.batch-job-request.v1', operation: 'calculate', items: [{ expression: '1+1' }, { expression: '2\u0000' }] }),
    { 'idempotency-key': 'edge-nul' },
  );
  t.is(withNul.status, 422, JSON.stringify(withNul.body));
  t.is(withNul.body.code, 'json_nul_character', JSON.stringify(withNul.body));
  // The base surface answers an HTTPValidationError: `detail` names the string.
  t.deepEqual(withNul.body.detail?.[0]?.loc, ['body', 'items', 1, 'expression']);
  const deep = await post(
    `${svc.baseUrl}/v1/jobs`,
    `{"schema":"svc.batch-job-request.v1","operation":"validate_json","items":[{"schema":{},"document":${nested(3000)}}]}`,
    { 'idempotency-key': 'edge-deep' },
  );
  t.is(deep.status, 422, JSON.stringify(deep.body));
  t.is(deep.body.code, 'json_too_deep');
  t.deepEqual(deep.body.detail?.[0]?.loc, ['body']);
});

test('NUL in /api/source-requests and /api/artifacts/{id}/mirror-request fields is a 422, not a 500', async (t) => {
  const source = await post(`${svc.apiUrl}/api/source-requests`, JSON.stringify({ repo: 'a/b', source: 'github', useCase: 'u\u0000', targetTool: 'vllm' }));
  t.is(source.status, 422, JSON.stringify(source.body));
  t.is(source.body.code, 'json_nul_character');
  t.deepEqual(source.body.detail?.[0]?.loc, ['body', 'useCase']);
  const mirror = await post(
    `${svc.apiUrl}/api/artifacts/all-minilm-l6-v2/mirror-request`,
    JSON.stringify({ useCase: 'edge', targetTool: 'onnx\u0000runtime' }),
  );
  t.is(mirror.status, 422, JSON.stringify(mirror.body));
  t.is(mirror.body.code, 'json_nul_character');
});

test('a developer-key name holding NUL is refused, not stored', async (t) => {
  const answer = await post(`${svc.baseUrl}/v1/developer/credentials`, JSON.stringify({ name: 'a\u0000b', scopes: ['models:read'] }));
  t.is(answer.status, 422, JSON.stringify(answer.body));
  t.is(answer.body.code, 'json_nul_character');
  t.deepEqual(answer.body.detail?.[0]?.loc, ['body', 'name']);
  // A NUL in an object key is refused the same way.
  const inKey = await post(`${svc.baseUrl}/v1/developer/credentials`, '{"name":"k","scopes":["models:read"],"\\u0000":1}');
  t.is(inKey.body.code, 'json_nul_character');
});

test('the MCP endpoint takes the same edge, answered as JSON-RPC errors', async (t) => {
  const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
  const call = (args: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"blackboard","arguments":${args}}}`;
  const withNul = await post(`${svc.apiUrl}/api/mcp`, call('{"op":"put","key":"edge:mcp","value":{"text":"a\\u0000"}}'), headers);
  t.is(withNul.status, 400, JSON.stringify(withNul.body));
  t.is(withNul.body.jsonrpc, '2.0');
  t.is((withNul.body.error as { code: number; data: { code: string } }).data.code, 'json_nul_character');
  t.is((withNul.body.error as { code: number }).code, -32600);
  const deep = await post(`${svc.apiUrl}/api/mcp`, call(`{"op":"put","key":"edge:mcp","value":{"text":"a","n":${nested(3000)}}}`), headers);
  t.is(deep.status, 400, JSON.stringify(deep.body));
  t.is((deep.body.error as { data: { code: string } }).data.code, 'json_too_deep');
});

/** A POST whose body is written in the pieces given, each its own TCP segment, so the server reads it in those chunks. */
async function postInPieces(url: string, pieces: string[]): Promise<Answer> {
  const target = new URL(url);
  const socket = net.connect({ host: target.hostname, port: Number(target.port), noDelay: true });
  await new Promise((resolve) => socket.once('connect', resolve));
  const length = pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0);
  socket.write(
    `POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\nauthorization: Bearer ${bearer}\r\ncontent-length: ${length}\r\nconnection: close\r\n\r\n`,
  );
  for (const piece of pieces) {
    // Apart in time, so the pieces arrive as separate chunks.
    await sleep(20);
    socket.write(piece);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const answer = Buffer.concat(chunks).toString('utf8');
  return { status: Number(answer.slice(9, 12)), body: JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Answer['body'] };
}

test('the edge scans a body as it arrives: an escape, a quote or a bracket split across chunks reads as in one piece', async (t) => {
  const url = `${svc.apiUrl}/api/v1/blackboard/put`;
  // `\u` cut after its backslash still flags the lone surrogate behind it.
  const lone = await postInPieces(url, ['{"key":"edge:split","value":{"text":"x\\', 'ud800y"}}']);
  t.is(lone.body.code, 'json_lone_surrogate', JSON.stringify(lone.body));
  // An escaped quote cut after its backslash does not end the string: the brackets after it are text.
  const quoted = await postInPieces(url, [`{"key":"edge:split-quote","value":{"text":"a\\`, `"${'['.repeat(100)}"}}`]);
  t.is(quoted.status, 201, JSON.stringify(quoted.body));
  // Three backslashes before a quote, cut after the first: the run counts across the cut, so the quote is escaped.
  const run = await postInPieces(url, [`{"key":"edge:split-run","value":{"text":"a\\`, `\\\\"${'['.repeat(100)}"}}`]);
  t.is(run.status, 201, JSON.stringify(run.body));
  // Brackets past the cap count across chunks.
  const half = '['.repeat(bodyRules.maxJsonDepth);
  const deep = await postInPieces(url, [`{"key":"edge:split-deep","value":{"text":"d","n":${half}`, `${half}${']'.repeat(2 * bodyRules.maxJsonDepth)}}}`]);
  t.is(deep.body.code, 'json_too_deep', JSON.stringify(deep.body));
});
