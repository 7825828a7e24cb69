import { isDeepStrictEqual } from 'node:util';
import test from 'ava';
import { inferenceContract, inferenceLimits, mcpContract, urlFor } from '@svc/schemas';
import { plainToolCallsAnswered } from '../src/features/mcp/fast-tool-call.ts';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

// The fast path of /mcp (features/mcp/fast-tool-call.ts) answers a plain tools/call without the
// MCP SDK's handler. Each request of the table is sent to a server with the fast path and to one
// whose every request goes through the SDK (the mcpSdkOnly seam): status, the headers that matter
// and the parsed body must be the same.
let fast: TestServer;
let sdk: TestServer;
const narrowed = new Map<TestServer, string>();

test.before(async () => {
  [fast, sdk] = await Promise.all([startTestServer(), startTestServer({ testSeams: { mcpSdkOnly: true } })]);
  for (const svc of [fast, sdk]) narrowed.set(svc, (await signInAgent(svc, 'models:read')).session.accessToken);
});
test.after.always(async () => {
  await Promise.all([fast?.close(), sdk?.close()]);
});

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const rerank = { query: 'how does postgres replicate', documents: ['WAL records are shipped to standbys.', 'Sourdough needs patience.'] };
const envelope = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'fast-path-test', version: '1' },
};

type Credential = 'operator' | 'narrowed' | 'none' | 'invalid';
interface Case {
  label: string;
  body: unknown;
  headers?: Record<string, string | undefined>;
  credential?: Credential;
  /** Answered by the fast path (a plain call); every other request goes through the SDK on both servers. */
  fast?: boolean;
}

function modernCall(id: unknown, name: string, args: unknown, meta: Record<string, unknown> = envelope) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { _meta: meta, name, ...(args === undefined ? {} : { arguments: args }) } };
}
function legacyCall(id: unknown, name: string, args: unknown) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, ...(args === undefined ? {} : { arguments: args }) } };
}
const modernHeaders = (name: string) => ({ 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name });
const legacyHeaders = { 'mcp-protocol-version': LEGACY };

const cases: Case[] = [];
for (const [era, call, headers] of [
  [MODERN, modernCall, modernHeaders],
  [LEGACY, legacyCall, () => legacyHeaders],
] as const) {
  const tool = 'inference_rerank';
  cases.push(
    { label: `${era}: success`, fast: true, body: call(1, tool, rerank), headers: headers(tool) },
    { label: `${era}: no arguments at all (the route's 422 as isError)`, fast: true, body: call(2, tool, undefined), headers: headers(tool) },
    { label: `${era}: unknown tool`, body: call(3, 'no_such_tool', {}), headers: headers('no_such_tool') },
    { label: `${era}: invalid arguments (the route's 422)`, fast: true, body: call(4, tool, { query: '', documents: [] }), headers: headers(tool) },
    { label: `${era}: an argument the tool does not take`, fast: true, body: call(5, tool, { ...rerank, colour: 'blue' }), headers: headers(tool) },
    { label: `${era}: arguments that are not an object`, body: call(6, tool, ['a']), headers: headers(tool) },
    { label: `${era}: missing credential`, body: call(7, tool, rerank), headers: headers(tool), credential: 'none' },
    { label: `${era}: a credential that is not valid`, body: call(8, tool, rerank), headers: headers(tool), credential: 'invalid' },
    { label: `${era}: narrowed token`, body: call(9, tool, rerank), headers: headers(tool), credential: 'narrowed' },
    {
      label: `${era}: an open tool without credential`,
      fast: true,
      body: call(10, 'catalog_search', { q: 'llama' }),
      headers: headers('catalog_search'),
      credential: 'none',
    },
    { label: `${era}: not JSON content`, body: call(11, tool, rerank), headers: { ...headers(tool), 'content-type': 'text/plain' } },
    { label: `${era}: no Accept`, fast: era === MODERN, body: call(12, tool, rerank), headers: { ...headers(tool), accept: undefined } },
    { label: `${era}: Accept JSON only`, fast: era === MODERN, body: call(13, tool, rerank), headers: { ...headers(tool), accept: 'application/json' } },
    { label: `${era}: an unknown protocol header`, body: call(14, tool, rerank), headers: { ...headers(tool), 'mcp-protocol-version': '1999-01-01' } },
    { label: `${era}: a progress token (an event stream, the SDK's)`, body: withProgress(call(15, tool, rerank)), headers: headers(tool) },
    { label: `${era}: a task param`, body: withParam(call(16, tool, rerank), 'task', { ttl: 1000 }), headers: headers(tool) },
    { label: `${era}: jsonrpc 1.0`, body: { ...call(17, tool, rerank), jsonrpc: '1.0' }, headers: headers(tool) },
    { label: `${era}: no method`, body: { ...call(18, tool, rerank), method: undefined }, headers: headers(tool) },
    { label: `${era}: an extra envelope key`, body: { ...call(19, tool, rerank), extra: true }, headers: headers(tool) },
    { label: `${era}: name not a string`, body: call(20, 42 as unknown as string, rerank), headers: headers(tool) },
    { label: `${era}: a batch`, body: [call(21, tool, rerank)], headers: headers(tool) },
  );
  for (const [kind, id] of [
    ['a string id', 'call-1'],
    ['an empty string id', ''],
    ['an integer id', 7],
    ['a zero id', 0],
    ['a negative id', -3],
    ['a fractional id', 1.5],
    ['a huge id', 2 ** 60],
    ['a null id', null],
    ['a boolean id', true],
    ['an object id', { n: 1 }],
    ['an array id', [1]],
  ] as const)
    cases.push({ label: `${era}: ${kind}`, body: call(id, tool, rerank), headers: headers(tool), fast: typeof id === 'string' || Number.isSafeInteger(id) });
}
cases.push(
  {
    label: `${MODERN}: header names 2025-11-25`,
    body: modernCall(30, 'inference_rerank', rerank),
    headers: { ...modernHeaders('inference_rerank'), 'mcp-protocol-version': LEGACY },
  },
  {
    label: `${MODERN}: no protocol header`,
    body: modernCall(31, 'inference_rerank', rerank),
    headers: { ...modernHeaders('inference_rerank'), 'mcp-protocol-version': undefined },
  },
  {
    label: `${MODERN}: no Mcp-Method`,
    body: modernCall(32, 'inference_rerank', rerank),
    headers: { ...modernHeaders('inference_rerank'), 'mcp-method': undefined },
  },
  {
    label: `${MODERN}: Mcp-Method names another`,
    body: modernCall(33, 'inference_rerank', rerank),
    headers: { ...modernHeaders('inference_rerank'), 'mcp-method': 'tools/list' },
  },
  {
    label: `${MODERN}: no Mcp-Name`,
    body: modernCall(34, 'inference_rerank', rerank),
    headers: { ...modernHeaders('inference_rerank'), 'mcp-name': undefined },
  },
  { label: `${MODERN}: Mcp-Name names another`, body: modernCall(35, 'inference_rerank', rerank), headers: modernHeaders('catalog_search') },
  {
    label: `${MODERN}: Mcp-Name as a Base64 sentinel`,
    body: modernCall(36, 'inference_rerank', rerank),
    headers: { ...modernHeaders('inference_rerank'), 'mcp-name': `=?base64?${Buffer.from('inference_rerank').toString('base64')}?=` },
  },
  {
    label: `${MODERN}: bad envelope (clientInfo not an object)`,
    body: modernCall(37, 'inference_rerank', rerank, { ...envelope, 'io.modelcontextprotocol/clientInfo': 5 }),
    headers: modernHeaders('inference_rerank'),
  },
  {
    label: `${MODERN}: envelope without clientCapabilities`,
    body: modernCall(38, 'inference_rerank', rerank, {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientInfo': { name: 'x', version: '1' },
    }),
    headers: modernHeaders('inference_rerank'),
  },
  {
    label: `${MODERN}: envelope names a 2025 revision`,
    body: modernCall(39, 'inference_rerank', rerank, { ...envelope, 'io.modelcontextprotocol/protocolVersion': LEGACY }),
    headers: modernHeaders('inference_rerank'),
  },
  { label: `${MODERN}: modern header without envelope`, body: legacyCall(40, 'inference_rerank', rerank), headers: modernHeaders('inference_rerank') },
  { label: `${LEGACY}: no protocol header`, fast: true, body: legacyCall(41, 'inference_rerank', rerank), headers: {} },
  {
    label: `${LEGACY}: header names 2025-06-18`,
    fast: true,
    body: legacyCall(42, 'inference_rerank', rerank),
    headers: { 'mcp-protocol-version': '2025-06-18' },
  },
);

function withProgress(call: { params: Record<string, unknown> }) {
  const { params } = call;
  return { ...call, params: { ...params, _meta: { ...(params._meta as object | undefined), progressToken: 'p1' } } };
}
function withParam(call: { params: Record<string, unknown> }, key: string, value: unknown) {
  return { ...call, params: { ...call.params, [key]: value } };
}

function authorizationFor(svc: TestServer, credential: Credential): string | undefined {
  if (credential === 'operator') return `Bearer ${svc.operatorToken}`;
  if (credential === 'narrowed') return `Bearer ${narrowed.get(svc)}`;
  if (credential === 'invalid') return 'Bearer not-a-token';
  return undefined;
}

async function send(svc: TestServer, entry: Case) {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const authorization = authorizationFor(svc, entry.credential ?? 'operator');
  if (authorization) headers.authorization = authorization;
  for (const [name, value] of Object.entries(entry.headers ?? {})) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  const response = await fetch(urlFor(svc.server.urls(), mcpContract.endpoint), { method: 'POST', headers, body: JSON.stringify(entry.body) });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  let body: unknown = text;
  if (type.startsWith('application/json') && text) body = JSON.parse(text);
  else if (type.startsWith('text/event-stream'))
    body = text
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line.length > 6)
      .map((line) => JSON.parse(line.slice(6)));
  return { status: response.status, headers: response.headers, body: comparable(body, svc) };
}

/** Fields whose values differ between two servers by nature: ids each server makes, and the times it made them. */
const MADE_HERE: Record<string, string> = { request_id: '<request id>', taskId: '<task id>', createdAt: '<time>', lastUpdatedAt: '<time>' };

/** What differs between two servers by nature: request ids, a task's id and times, and the server's own URL in a challenge or a message. */
function comparable(value: unknown, svc: TestServer): unknown {
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if ((trimmed.startsWith('{') || trimmed.startsWith('[')) && trimmed.length > 1) {
      try {
        return { json: comparable(JSON.parse(trimmed), svc) };
      } catch {}
    }
    return value.replaceAll(svc.baseUrl, '<base>');
  }
  if (Array.isArray(value)) return value.map((item) => comparable(item, svc));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, Object.hasOwn(MADE_HERE, key) ? MADE_HERE[key] : comparable(item, svc)]));
  return value;
}

const HEADERS = ['content-type', 'www-authenticate', 'mcp-protocol-version', 'cache-control', 'allow'];

// Serial (AVA runs serial tests before the others, one at a time): which calls took the fast path
// is read from a process-wide counter, which another test's tool call would move.
test.serial('every request of the table: the fast path answers what the SDK answers (status, headers, body)', async (t) => {
  const tookFastPath: string[] = [];
  const differences: Array<{ label: string; fast: unknown; sdk: unknown }> = [];
  for (const entry of cases) {
    const before = plainToolCallsAnswered();
    const [viaFast, viaSdk] = await Promise.all([send(fast, entry), send(sdk, entry)]);
    if (plainToolCallsAnswered() > before) tookFastPath.push(entry.label);
    const seen = (answer: typeof viaFast, svc: TestServer) => ({
      status: answer.status,
      headers: Object.fromEntries(HEADERS.map((name) => [name, answer.headers.get(name)?.replaceAll(svc.baseUrl, '<base>') ?? null])),
      body: answer.body,
    });
    const [a, b] = [seen(viaFast, fast), seen(viaSdk, sdk)];
    if (!isDeepStrictEqual(a, b)) differences.push({ label: entry.label, fast: a, sdk: b });
  }
  t.deepEqual(differences, [], JSON.stringify(differences, null, 1).slice(0, 6000));
  t.true(cases.length > 60);
  t.deepEqual(
    tookFastPath,
    cases.filter((entry) => entry.fast).map((entry) => entry.label),
  );
});

test('the table reaches both paths: a plain call succeeds with the REST answer, refusals are refusals', async (t) => {
  const success = await send(fast, cases[0]!);
  t.is(success.status, 200);
  const { result } = success.body as { result: { structuredContent: { results: unknown[] }; isError?: boolean } };
  t.falsy(result.isError);
  t.is(result.structuredContent.results.length, 2);
  const unknown = await send(fast, cases[2]!);
  t.is((unknown.body as { error: { code: number } }).error.code, -32602);
});

// Serial: the table test counts the calls the fast path answered in this process.
test.serial(
  "a developer key's requests per minute count each tool call exactly once on both paths (the tool's route takes the principal /mcp resolved)",
  async (t) => {
    for (const svc of [fast, sdk]) {
      const agent = await signInAgent(svc);
      const created = await agent.client.credentials.create({
        body: { name: 'mcp-limits', scopes: ['inference:invoke'], limits: { requests_per_minute: 3 } },
      });
      const authorization = `Bearer ${created.secret}`;
      const call = async (id: number) => {
        const response = await fetch(urlFor(svc.server.urls(), mcpContract.endpoint), {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization, ...modernHeaders('inference_rerank') },
          body: JSON.stringify(modernCall(id, 'inference_rerank', rerank)),
        });
        t.is(response.status, 200);
        return ((await response.json()) as { result: { isError?: boolean; structuredContent: { code?: string } } }).result;
      };
      // The four requests fall in one minute's window.
      if (Date.now() % 60_000 > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));
      t.falsy((await call(1)).isError);
      const rest = await fetch(urlFor(svc.server.urls(), inferenceContract.rerank), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify(rerank),
      });
      t.is(rest.status, 200);
      t.is(rest.headers.get('x-ratelimit-remaining-requests'), '1', 'the tool call and the REST call counted once each');
      t.falsy((await call(2)).isError);
      const refused = await call(3);
      t.true(refused.isError);
      t.is(refused.structuredContent.code, 'key_limit_exceeded:requests_per_minute');
    }
  },
);

/** A modern tool call whose arguments are the JSON text given (written by hand: `__proto__` members stay members). */
async function toolCallText(svc: TestServer, name: string, argumentsText: string) {
  const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":${JSON.stringify(envelope)},"name":${JSON.stringify(name)},"arguments":${argumentsText}}}`;
  const response = await fetch(urlFor(svc.server.urls(), mcpContract.endpoint), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${svc.operatorToken}`,
      ...modernHeaders(name),
    },
    body: text,
  });
  if (response.status !== 200) throw new Error(`the tool call answered ${response.status}`);
  return ((await response.json()) as { result: { isError?: boolean; structuredContent: Record<string, unknown> } }).result;
}
async function restText(svc: TestServer, url: string, bodyText: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}` },
    body: bodyText,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
const withoutRequestId = ({ request_id: _id, ...rest }: Record<string, unknown>) => rest;

test("a tool's arguments are held to the route's body cap by their JSON text's length, as REST holds the same text (413), on both paths", async (t) => {
  // /v1/route takes 64 KiB; /mcp takes the call whole.
  const argumentsText = JSON.stringify({ task: 'x'.repeat(70_000) });
  for (const svc of [fast, sdk]) {
    const tool = await toolCallText(svc, 'inference_route', argumentsText);
    const rest = await restText(svc, urlFor(svc.server.urls(), inferenceContract.route), argumentsText);
    t.is(rest.status, 413);
    t.true(tool.isError);
    t.deepEqual(withoutRequestId(tool.structuredContent), withoutRequestId(rest.body));
  }
});

test("arguments whose JSON text is exactly the route's body cap are read, one byte more is 413, as REST reads the same text, on both paths", async (t) => {
  const cap = inferenceLimits.describeBodyBytes;
  const argumentsOf = (length: number) => {
    const text = JSON.stringify({ task: 'x'.repeat(length - '{"task":""}'.length) });
    if (text.length !== length) throw new Error('the arguments text is not the length asked for');
    return text;
  };
  for (const svc of [fast, sdk]) {
    for (const length of [cap, cap + 1]) {
      const argumentsText = argumentsOf(length);
      const tool = await toolCallText(svc, 'inference_route', argumentsText);
      const rest = await restText(svc, urlFor(svc.server.urls(), inferenceContract.route), argumentsText);
      t.is(rest.status === 413, length > cap, `REST at ${length} bytes`);
      t.is(tool.structuredContent.code === 'payload_too_large', length > cap, `the tool at ${length} bytes`);
      t.deepEqual(withoutRequestId(tool.structuredContent), withoutRequestId(rest.body));
    }
  }
});

// The fast path only: the SDK's handler rebuilds the arguments object, where a `__proto__` member
// becomes the prototype (the route then does not see it, while REST refuses it as an unknown key).
test("a `__proto__` member of the arguments is a member of the route's body, as in the same REST body (the fast path)", async (t) => {
  for (const argumentsText of [
    `{"__proto__":{"query":"postgres"},"documents":["a","b"]}`,
    `{"query":"postgres","documents":["a","b"],"__proto__":{"top_n":1}}`,
  ]) {
    const tool = await toolCallText(fast, 'inference_rerank', argumentsText);
    const rest = await restText(fast, urlFor(fast.server.urls(), inferenceContract.rerank), argumentsText);
    t.is(Boolean(tool.isError), rest.status >= 400, argumentsText);
    t.deepEqual(withoutRequestId(tool.structuredContent), withoutRequestId(rest.body), argumentsText);
  }
});
