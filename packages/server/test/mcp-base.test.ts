import test, { type ExecutionContext } from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { agentTools, catalogContract, contract, inferenceContract, isAgentCallable, mcpContract, urlFor, walkContract } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const endpoint = () => new URL(urlFor(svc.server.urls(), mcpContract.endpoint));

interface ToolClient {
  listTools(): Promise<{ tools: Array<{ name: string; inputSchema: Record<string, unknown>; annotations?: Record<string, unknown> }> }>;
  callTool(request: { name: string; arguments: Record<string, unknown> }): Promise<{ isError?: boolean; structuredContent?: unknown; content?: unknown }>;
  close(): Promise<void>;
}

type Flavour = { label: string; connect: (token?: string) => Promise<ToolClient> };

const headersFor = (token?: string) => (token ? { headers: { authorization: `Bearer ${token}` } } : {});

/** The official clients, unchanged: the v1 SDK (2025-11-25) and the v2 client at each revision. */
const flavours: Flavour[] = [
  {
    label: 'v1 SDK, 2025-11-25',
    async connect(token) {
      const client = new ClientV1({ name: 'svc-test-v1', version: '1.0.0' });
      await client.connect(new TransportV1(endpoint(), { requestInit: headersFor(token) }));
      return client as unknown as ToolClient;
    },
  },
  {
    label: 'v2 client, 2025-11-25',
    async connect(token) {
      const client = new ClientV2({ name: 'svc-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
      await client.connect(new TransportV2(endpoint(), { requestInit: headersFor(token) }));
      return client as unknown as ToolClient;
    },
  },
  {
    label: 'v2 client, 2026-07-28',
    async connect(token) {
      const client = new ClientV2({ name: 'svc-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new TransportV2(endpoint(), { requestInit: headersFor(token) }));
      t_assertModern(client);
      return client as unknown as ToolClient;
    },
  },
];

function t_assertModern(client: ClientV2) {
  if (client.getNegotiatedProtocolVersion() !== '2026-07-28') throw new Error(`negotiated ${client.getNegotiatedProtocolVersion()}`);
}

async function rest(route: { method: string; path: string }, url: string, body: unknown, token?: string) {
  const response = await fetch(url, {
    method: route.method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const withoutRequestId = (body: unknown) => {
  const { request_id: _ignored, ...rest } = body as Record<string, unknown>;
  return rest;
};

test('the contract walk: every agent-callable route is a tool, every tool is a route, and the rule keeps secrets and purchases out', (t) => {
  const tools = agentTools(contract);
  const byId = new Map(tools.map((tool) => [tool.id, tool]));
  for (const { id, route } of walkContract(contract)) {
    if (isAgentCallable(route, contract)) t.truthy(byId.get(id), `${id} is agent-callable but no tool carries it`);
  }
  const ids = new Set(walkContract(contract).map((entry) => entry.id));
  for (const tool of tools) t.true(ids.has(tool.id), `tool ${tool.name} has no contract route`);
  t.is(new Set(tools.map((tool) => tool.name)).size, tools.length, 'tool names are unique');
  const names = tools.map((tool) => tool.name);
  for (const expected of [
    'catalog_search',
    'catalog_download_plan',
    'inference_rerank',
    'inference_summarize',
    'inference_rag',
    'pdf_extract',
    'jobs_submit',
    'jobs_get',
    'requests_feature',
    'billing_balance',
    'billing_usage',
    'blackboard_get',
    'blackboard_put',
  ])
    t.true(names.includes(expected), expected);
  for (const refused of [
    'developer_keys_create',
    'developer_keys_rotate',
    'billing_checkout',
    'credits_chat',
    'x402_chat',
    'blackboard_mcp',
    'mcp_endpoint',
    'oauth_token',
    'blackboard_get_post',
  ])
    t.false(names.includes(refused), refused);
  const annotations = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations]));
  t.true(annotations.catalog_search!.readOnlyHint);
  t.true(annotations.jobs_cancel!.destructiveHint);
  t.true(annotations.developer_keys_revoke!.destructiveHint);
  t.false(annotations.inference_rerank!.destructiveHint);
  t.true(annotations.jobs_submit!.idempotentHint, 'jobs_submit honours an Idempotency-Key');
});

const rerankBody = { query: 'postgres replication', documents: ['a cake recipe', 'streaming replication in postgres', 'postgres logical replication', 'tea'] };

for (const flavour of flavours) {
  test(`${flavour.label}: tools/list gives every agent-callable operation, with input schemas that validate the REST requests`, async (t) => {
    const client = await flavour.connect();
    try {
      const { tools } = await client.listTools();
      t.deepEqual(
        tools.map((tool) => tool.name),
        agentTools(contract).map((tool) => tool.name),
      );
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      const schemaOf = (name: string) => ajv.compile(tools.find((tool) => tool.name === name)!.inputSchema);
      t.true(schemaOf('inference_rerank')(rerankBody));
      t.true(schemaOf('catalog_search')({ q: 'llama', limit: 5 }));
      t.true(schemaOf('jobs_get')({ job_id: 'job_0000000000000000abcd' }));
      t.false(schemaOf('inference_rerank')({ ...rerankBody, surprise: 1 }), 'an unknown argument is refused by the schema too');
    } finally {
      await client.close();
    }
  });

  test(`${flavour.label}: a tool call answers the same JSON as its REST route`, async (t) => {
    const token = svc.operatorToken;
    const client = await flavour.connect(token);
    try {
      const called = await client.callTool({ name: 'inference_rerank', arguments: rerankBody });
      t.falsy(called.isError, JSON.stringify(called.content));
      const twin = await rest(inferenceContract.rerank, urlFor(svc.server.urls(), inferenceContract.rerank), rerankBody, token);
      t.deepEqual(called.structuredContent, twin.body);

      const search = await client.callTool({ name: 'catalog_search', arguments: { q: 'model', limit: 3 } });
      const searchTwin = await rest(catalogContract.search, `${urlFor(svc.server.urls(), catalogContract.search)}?q=model&limit=3`, undefined);
      t.deepEqual(search.structuredContent, searchTwin.body);

      const invalid = await client.callTool({ name: 'inference_rerank', arguments: { query: 'q', documents: [] } });
      t.true(invalid.isError);
      const invalidTwin = await rest(inferenceContract.rerank, urlFor(svc.server.urls(), inferenceContract.rerank), { query: 'q', documents: [] }, token);
      t.is(invalidTwin.status, 422);
      t.deepEqual(withoutRequestId(invalid.structuredContent), withoutRequestId(invalidTwin.body), 'a refused call carries the REST error body');
    } finally {
      await client.close();
    }
  });

  test(`${flavour.label}: a narrowed token sees only its tools and gets the scope error`, async (t) => {
    const { session } = await signInAgent(svc, 'models:read');
    const client = await flavour.connect(session.accessToken);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      t.true(names.includes('models_list'));
      t.true(names.includes('catalog_search'), 'public tools stay listed');
      t.false(names.includes('inference_rerank'));
      const error = await t.throwsAsync(client.callTool({ name: 'inference_rerank', arguments: rerankBody }));
      t.regex(String(error?.message), /403|insufficient_scope|scope/i);
    } finally {
      await client.close();
    }
  });
}

async function rawPost(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(endpoint(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const rerankCall = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'inference_rerank', arguments: rerankBody } };

test('a tool needing a credential, called without one, is 401 naming the /mcp protected-resource metadata', async (t) => {
  const answer = await rawPost(rerankCall);
  t.is(answer.status, 401, answer.text);
  // The JSON-RPC code is the server error both MCP SDKs answer HTTP-level refusals with, not -32603.
  t.is(JSON.parse(answer.text).error.code, -32000);
  const challenge = answer.headers.get('www-authenticate') ?? '';
  t.true(challenge.startsWith('Bearer '), challenge);
  t.true(challenge.includes(`resource_metadata="${svc.baseUrl}/.well-known/oauth-protected-resource/mcp"`), challenge);
  const metadata = (await (await fetch(`${svc.baseUrl}/.well-known/oauth-protected-resource/mcp`)).json()) as { resource: string };
  t.is(metadata.resource, endpoint().href.replace(/\/$/, ''));
  for (const path of ['/.well-known/mcp/server-card.json', '/mcp/.well-known/mcp']) {
    const card = (await (await fetch(`${svc.baseUrl}${path}`)).json()) as { remotes: Array<{ url: string }> };
    t.true(
      card.remotes.some((remote) => remote.url === endpoint().href),
      `${path} names ${endpoint().href}`,
    );
  }
});

test('a narrowed token is 403 insufficient_scope with the scope the tool needs; a token that is not valid is 401 invalid_token', async (t) => {
  const { session } = await signInAgent(svc, 'models:read');
  const narrowed = await rawPost(rerankCall, { authorization: `Bearer ${session.accessToken}` });
  t.is(narrowed.status, 403, narrowed.text);
  t.regex(narrowed.headers.get('www-authenticate') ?? '', /error="insufficient_scope", scope="inference:invoke"/);
  t.like(JSON.parse(narrowed.text), { jsonrpc: '2.0', error: { code: -32000, data: { code: 'insufficient_scope:inference:invoke' } } });
  const invalid = await rawPost({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { authorization: 'Bearer not-a-token' });
  t.is(invalid.status, 401, invalid.text);
  t.regex(invalid.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  t.like(JSON.parse(invalid.text), { error: { code: -32000, data: { code: 'invalid_token' } } });
});

test('resource templates read an artifact and a blackboard channel through their REST routes', async (t: ExecutionContext) => {
  const client = new ClientV1({ name: 'svc-test-v1', version: '1.0.0' });
  await client.connect(new TransportV1(endpoint()));
  try {
    const { resourceTemplates } = await client.listResourceTemplates();
    t.deepEqual(
      resourceTemplates.map((template) => template.uriTemplate),
      ['svc://artifacts/{id}', 'svc://blackboard/{key}'],
    );
    const key = `mcp-base-${Date.now()}`;
    const put = await client.callTool({ name: 'blackboard_put', arguments: { key, value: { text: 'hello resources' } } });
    t.falsy(put.isError, JSON.stringify(put.content));
    const read = await client.readResource({ uri: `svc://blackboard/${encodeURIComponent(key)}` });
    const page = JSON.parse((read.contents[0] as { text: string }).text) as { items: Array<{ item: { text: string } }> };
    t.deepEqual(
      page.items.map((entry) => entry.item.text),
      ['hello resources'],
    );
    await t.throwsAsync(client.readResource({ uri: 'svc://artifacts/no-such-artifact-anywhere' }));
  } finally {
    await client.close();
  }
});
