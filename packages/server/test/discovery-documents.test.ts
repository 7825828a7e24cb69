import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { discoverOAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import { A2A_AGENT_CARD_PATHS, A2aAgentCard, MCP_SERVER_CARD_PATHS, McpServerCard } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
/** A second server with the api surface on a port of its own: the documents must name it. */
let split: TestServer;
test.before(async () => {
  svc = await startTestServer();
  split = await startTestServer({ env: { SVC_API_PORT: '0' } });
  if (split.apiUrl === split.baseUrl) throw new Error('the split server shares one listener');
});
test.after.always(async () => {
  await svc?.close();
  await split?.close();
});

async function bytesOf(url: string) {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

for (const [label, server] of [
  ['one listener', () => svc],
  ['split api port', () => split],
] as const) {
  test(`MCP server cards (${label}): every alias serves the same bytes describing {base}/mcp; <endpoint>/server-card describes {api}/api/mcp`, async (t) => {
    const { baseUrl, apiUrl } = server();
    const urls = MCP_SERVER_CARD_PATHS.map((path) => `${baseUrl}${path}`);
    const answers = await Promise.all(urls.map(bytesOf));
    for (const [index, answer] of answers.entries()) {
      t.is(answer.status, 200, urls[index]);
      t.regex(answer.headers.get('content-type') ?? '', /^application\/json/, urls[index]);
      t.is(answer.headers.get('access-control-allow-origin'), '*', urls[index]);
      t.is(answer.text, answers[0]!.text, `${urls[index]} is byte-identical`);
    }
    const card = McpServerCard.parse(JSON.parse(answers[0]!.text));
    t.is(card.transport.endpoint, `${baseUrl}/mcp`);
    t.deepEqual(card.remotes, [{ type: 'streamable-http', url: `${baseUrl}/mcp`, supportedProtocolVersions: card.supportedProtocolVersions }]);
    t.deepEqual(card.supportedProtocolVersions.slice(0, 2), ['2026-07-28', '2025-11-25']);
    t.is(card.serverInfo.name, 'svc');
    t.true(card.tools.some((tool) => tool.name === 'inference_rerank'));
    t.false(
      card.tools.some((tool) => tool.name === 'blackboard'),
      "the blackboard tool is /api/mcp's",
    );
    t.is(card.authentication.protectedResourceMetadata, `${baseUrl}/.well-known/oauth-protected-resource/mcp`);
    t.is(card.authentication.authorizationServerMetadata, `${baseUrl}/.well-known/oauth-authorization-server`);
    t.true(card.description.length <= 100);

    // The OAuth documents the card names exist and name the MCP endpoint where it really is; the
    // /mcp/.well-known alias is the same document.
    const resource = await (await fetch(card.authentication.protectedResourceMetadata)).json();
    t.is(resource.resource, `${baseUrl}/mcp`);
    t.deepEqual(resource.authorization_servers, [baseUrl]);
    t.deepEqual(await (await fetch(`${baseUrl}/mcp/.well-known/oauth-protected-resource`)).json(), resource);
    const authorizationServer = await (await fetch(card.authentication.authorizationServerMetadata)).json();
    t.is(authorizationServer.issuer, baseUrl);
    // The MCP SDK's own discovery, from the endpoint URL, finds that same document.
    t.deepEqual(await discoverOAuthProtectedResourceMetadata(card.transport.endpoint), resource);

    // {api}/api/mcp/server-card: the blackboard's endpoint and its one tool (spec: /api/mcp exposes one tool).
    const apiAnswer = await bytesOf(`${apiUrl}/api/mcp/server-card`);
    t.is(apiAnswer.status, 200);
    t.is(apiAnswer.headers.get('access-control-allow-origin'), '*');
    const apiCard = McpServerCard.parse(JSON.parse(apiAnswer.text));
    t.is(apiCard.transport.endpoint, `${apiUrl}/api/mcp`);
    t.deepEqual(apiCard.remotes, [{ type: 'streamable-http', url: `${apiUrl}/api/mcp`, supportedProtocolVersions: apiCard.supportedProtocolVersions }]);
    t.is(apiCard.serverInfo.name, 'svc-blackboard');
    t.deepEqual(
      apiCard.tools.map((tool) => tool.name),
      ['blackboard'],
    );
    t.is(apiCard.authentication.protectedResourceMetadata, `${apiUrl}/.well-known/oauth-protected-resource/api/mcp`);
    const apiResource = await (await fetch(apiCard.authentication.protectedResourceMetadata)).json();
    t.is(apiResource.resource, `${apiUrl}/api/mcp`);
    t.deepEqual(await discoverOAuthProtectedResourceMetadata(apiCard.transport.endpoint), apiResource);
  });
}

for (const [label, path] of [
  ['/mcp', '/.well-known/mcp/server-card.json'],
  ['/api/mcp', '/api/mcp/server-card'],
] as const) {
  test(`MCP server card of ${label}: the tools and their input schemas are what its tools/list answers`, async (t) => {
    const card = McpServerCard.parse(await (await fetch(`${path.startsWith('/api') ? svc.apiUrl : svc.baseUrl}${path}`)).json());
    const client = new ClientV1({ name: 'card-check', version: '1.0.0' });
    await client.connect(new TransportV1(new URL(card.transport.endpoint)));
    try {
      const { tools } = await client.listTools();
      t.deepEqual(
        card.tools.map(({ name, title, description, inputSchema, annotations }) => ({ name, title, description, inputSchema, annotations })),
        tools.map(({ name, title, description, inputSchema, annotations }) => ({ name, title, description, inputSchema, annotations })),
      );
      t.is(card.serverInfo.name, client.getServerVersion()!.name);
      t.is(card.serverInfo.version, client.getServerVersion()!.version);
    } finally {
      await client.close();
    }
  });
}

test('A2A agent card: every alias serves the same bytes; the card is valid for 1.0 and 0.3 readers', async (t) => {
  const urls = A2A_AGENT_CARD_PATHS.map((path) => `${svc.baseUrl}${path}`);
  const answers = await Promise.all(urls.map(bytesOf));
  for (const [index, answer] of answers.entries()) {
    t.is(answer.status, 200, urls[index]);
    t.is(answer.headers.get('access-control-allow-origin'), '*');
    t.is(answer.text, answers[0]!.text, `${urls[index]} is byte-identical`);
  }
  const card = A2aAgentCard.parse(JSON.parse(answers[0]!.text));
  t.is(card.url, `${svc.baseUrl}/a2a`);
  t.is(card.protocolVersion, '0.3.0');
  t.deepEqual(
    card.supportedInterfaces.map((entry) => [entry.url, entry.protocolBinding, entry.protocolVersion]),
    [
      [`${svc.baseUrl}/a2a`, 'JSONRPC', '1.0'],
      [`${svc.baseUrl}/a2a`, 'JSONRPC', '0.3'],
    ],
  );
  t.deepEqual(
    card.skills.map((skill) => skill.id),
    ['public-trial', 'blackboard', 'rag', 'summarize', 'classify', 'rerank', 'catalog-search', 'pdf-extract'],
  );
  t.deepEqual(Object.keys(card.securitySchemes), ['bearer', 'oauth2']);
  t.false('security' in card, 'the trial needs no credential: no card-level requirement');
});

test('GET /a2a answers crawlers with where the card is and how to call', async (t) => {
  const response = await fetch(`${svc.baseUrl}/a2a`);
  t.is(response.status, 200);
  t.is(response.headers.get('link'), `<${svc.baseUrl}/.well-known/agent-card.json>; rel="describedby"`);
  const info = await response.json();
  t.is(info.agentCard, `${svc.baseUrl}/.well-known/agent-card.json`);
  t.deepEqual(info.endpoint, { method: 'POST', url: `${svc.baseUrl}/a2a`, contentType: 'application/json' });
  t.deepEqual(info.protocolVersions, ['1.0', '0.3']);
  // The example it gives works as it is.
  const tried = await fetch(`${svc.baseUrl}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(info.example) });
  t.is(tried.status, 200);
  t.is((await tried.json()).result.id, 'svc-public-trial-v1');
});

test('/, /llms.txt, /llms-full.txt and the OpenAPI document link every discovery document', async (t) => {
  const root = await (await fetch(`${svc.baseUrl}/`)).json();
  const expected = {
    mcp_server_card: `${svc.baseUrl}/.well-known/mcp/server-card.json`,
    mcp_endpoint: `${svc.apiUrl}/api/mcp`,
    agent_card: `${svc.baseUrl}/.well-known/agent-card.json`,
    a2a: `${svc.baseUrl}/a2a`,
    oauth_authorization_server: `${svc.baseUrl}/.well-known/oauth-authorization-server`,
    oauth_protected_resource: `${svc.baseUrl}/.well-known/oauth-protected-resource`,
  };
  for (const [name, url] of Object.entries(expected)) t.is(root.links[name], url, name);
  t.is(root.links.try, `${svc.baseUrl}/v1/try`, 'the zero-credential activation proof');
  const llms = await (await fetch(`${svc.baseUrl}/llms.txt`)).text();
  const llmsFull = await (await fetch(`${svc.baseUrl}/llms-full.txt`)).text();
  // Where an agent starts: both link the zero-credential activation proof (issue 43).
  for (const [name, text] of [
    ['llms.txt', llms],
    ['llms-full.txt', llmsFull],
  ] as const)
    t.true(text.includes(`](${svc.baseUrl}/v1/try)`), `${name} links ${svc.baseUrl}/v1/try`);
  for (const url of Object.values(expected)) {
    t.true(llms.includes(url), `llms.txt links ${url}`);
    t.true(llmsFull.includes(url), `llms-full.txt links ${url}`);
  }
  const openapi = await (await fetch(`${svc.baseUrl}/openapi.json`)).json();
  for (const path of [...MCP_SERVER_CARD_PATHS, ...A2A_AGENT_CARD_PATHS, '/a2a', '/api/mcp', '/api/mcp/server-card'])
    t.truthy(openapi.paths[path], `OpenAPI has ${path}`);
  t.deepEqual(openapi['x-svc-discovery'], {
    llms: `${svc.baseUrl}/llms.txt`,
    mcp_server_card: expected.mcp_server_card,
    mcp_endpoint: expected.mcp_endpoint,
    agent_card: expected.agent_card,
    a2a: expected.a2a,
    oauth_authorization_server: expected.oauth_authorization_server,
  });
});

test('@svc/client: client.discovery.* reads every document, each alias equal to the first', async (t) => {
  const client = svc.client();
  const mcp = await client.discovery.mcpServerCard();
  for (const alias of [
    client.discovery.mcpJson,
    client.discovery.mcpWellKnown,
    client.discovery.mcpRootJson,
    client.discovery.mcpPrefixedJson,
    client.discovery.mcpPrefixed,
  ]) {
    t.deepEqual(await alias(), mcp);
  }
  t.deepEqual(
    (await client.discovery.mcpEndpointServerCard()).tools.map((tool) => tool.name),
    ['blackboard'],
  );
  const agent = await client.discovery.agentCard();
  for (const alias of [
    client.discovery.agentJson,
    client.discovery.agentDirectoryWellKnown,
    client.discovery.agentDirectory,
    client.discovery.agentsWellKnown,
    client.discovery.agents,
  ]) {
    t.deepEqual(await alias(), agent);
  }
  t.is((await client.discovery.a2aInfo()).agentCard, `${svc.baseUrl}/.well-known/agent-card.json`);
  const answer = await client.discovery.a2a({ body: { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'svc-public-trial-v1' } } });
  t.true('result' in answer, 'a JSON answer, not a stream');
  if ('result' in answer) t.is(answer.result.id, 'svc-public-trial-v1');
});
