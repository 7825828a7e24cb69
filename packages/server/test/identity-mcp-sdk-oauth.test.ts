import test from 'ava';
import type { ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, UnauthorizedError, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedErrorV2,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';

/**
 * The official MCP SDK (1.x), unchanged, completes its OAuth flow against svc: RFC 9728 discovery
 * from the MCP endpoint, registration (dynamic, or a client ID metadata document served over real
 * TLS on loopback), PKCE authorize (svc approves at once) and the token exchange with `resource`
 * = the MCP URL (RFC 8707). Only the "browser" is ours: it follows the authorization URL the SDK
 * hands to redirectToAuthorization and gives the SDK the code from the redirect.
 */
const REDIRECT = 'http://127.0.0.1:53682/callback';
let svc: TestServer;
let source: HttpsSource;
let documentUrl = '';

test.before(async () => {
  const certificate = selfSignedCertificate(['mcp-client.test']);
  source = await startHttpsSource(certificate, {
    '/client.json': (_request, response: ServerResponse) => {
      const body = JSON.stringify({
        client_id: documentUrl,
        client_name: 'svc SDK test (metadata document)',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      });
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(body);
    },
  });
  documentUrl = `https://mcp-client.test:${source.port}/client.json`;
  const lookup = async (hostname: string) => {
    if (hostname !== 'mcp-client.test') throw new Error(`ENOTFOUND ${hostname}`);
    return [{ address: '127.0.0.1', family: 4 }];
  };
  svc = await startTestServer({ testSeams: { clientMetadataFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } } });
});
test.after.always(async () => {
  await svc?.close();
  await source?.close();
});

/** An in-memory OAuthClientProvider, as a CLI host would write one; it records the authorization URL instead of opening a browser. */
class MemoryProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier = '';
  #discovery: OAuthDiscoveryState | undefined;
  readonly clientMetadataUrl: string | undefined;

  constructor(clientMetadataUrl?: string) {
    this.clientMetadataUrl = clientMetadataUrl;
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'svc SDK test',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.#client = information;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  // Kept between the two legs so the v2 client can check the callback came from the server it discovered (SEP-2352).
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.#discovery = state;
  }
  discoveryState() {
    return this.#discovery;
  }
}

/** The browser's part: follow the authorization URL (svc approves at once) and read the code off the redirect. */
async function approve(provider: MemoryProvider): Promise<string> {
  return (await callbackOf(provider)).get('code')!;
}

/** The whole callback query (code, state, iss): what the v2 client's finishAuth takes. */
async function callbackOf(provider: MemoryProvider): Promise<URLSearchParams> {
  if (!provider.authorizationUrl) throw new Error('the SDK did not ask for authorization');
  const response = await fetch(provider.authorizationUrl, { redirect: 'manual' });
  if (response.status !== 302) throw new Error(`authorize answered ${response.status}: ${await response.text()}`);
  const callback = new URL(response.headers.get('location')!);
  if (`${callback.origin}${callback.pathname}` !== REDIRECT) throw new Error(`redirected to ${callback.href}`);
  return callback.searchParams;
}

async function authorizeWithSdk(t: import('ava').ExecutionContext, provider: MemoryProvider, serverUrl: string) {
  t.is(await auth(provider, { serverUrl }), 'REDIRECT');
  const url = provider.authorizationUrl!;
  t.is(url.searchParams.get('resource'), serverUrl, 'the SDK asks for the MCP URL as the resource (RFC 8707)');
  t.is(url.searchParams.get('code_challenge_method'), 'S256');
  t.is(await auth(provider, { serverUrl, authorizationCode: await approve(provider) }), 'AUTHORIZED');
  const tokens = provider.tokens()!;
  t.truthy(tokens.access_token);
  t.truthy(tokens.refresh_token);
  const me = await svc.client({ token: tokens.access_token }).oauth.whoami();
  t.is(me.resource, serverUrl, 'the token is bound to the MCP URL');
  return { tokens, me };
}

/** The token works at the MCP endpoint it was issued for, through the SDK's own transport. */
async function callBlackboard(t: import('ava').ExecutionContext, provider: MemoryProvider, serverUrl: string) {
  const client = new Client({ name: 'svc-sdk-oauth', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
  try {
    const { tools } = await client.listTools();
    t.true(tools.some((tool) => tool.name === 'blackboard'));
  } finally {
    await client.close();
  }
}

test('dynamic registration: discovery from {api}/api/mcp, RFC 7591 registration, PKCE, token bound to the MCP URL', async (t) => {
  const serverUrl = `${svc.apiUrl}/api/mcp`;
  const provider = new MemoryProvider();
  const { me } = await authorizeWithSdk(t, provider, serverUrl);
  t.notRegex(me.client_id!, /^https:/, 'a registered (signed) client');
  await callBlackboard(t, provider, serverUrl);

  // The SDK's refresh keeps the binding (the refresh token carries the resource).
  t.is(await auth(provider, { serverUrl }), 'AUTHORIZED');
  t.is((await svc.client({ token: provider.tokens()!.access_token }).oauth.whoami()).resource, serverUrl);
});

test('client ID metadata document: the SDK uses its https URL as client_id, svc fetches and checks it', async (t) => {
  const serverUrl = `${svc.apiUrl}/api/mcp`;
  const provider = new MemoryProvider(documentUrl);
  const { me } = await authorizeWithSdk(t, provider, serverUrl);
  t.is(provider.clientInformation()?.client_id, documentUrl);
  t.is(provider.authorizationUrl!.searchParams.get('client_id'), documentUrl);
  t.is(me.client_id, documentUrl);
  await callBlackboard(t, provider, serverUrl);
});

/**
 * At {base}/mcp the flow starts the way a host meets it: the SDK calls a tool that needs a
 * credential, svc answers 401 naming the /mcp protected-resource metadata, the SDK's provider runs
 * discovery, registration, PKCE and the token exchange, and the same client retries the call.
 */
async function callAfterOAuth(t: import('ava').ExecutionContext, provider: MemoryProvider) {
  const serverUrl = `${svc.baseUrl}/mcp`;
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
  const client = new Client({ name: 'svc-sdk-oauth', version: '1.0.0' });
  await client.connect(transport);
  try {
    await t.throwsAsync(client.callTool({ name: 'models_list', arguments: {} }), { instanceOf: UnauthorizedError });
    t.is(provider.authorizationUrl?.searchParams.get('resource'), serverUrl, 'the SDK asks for {base}/mcp as the resource');
    await transport.finishAuth(await approve(provider));
    const me = await svc.client({ token: provider.tokens()!.access_token }).oauth.whoami();
    t.is(me.resource, serverUrl);
    const result = await client.callTool({ name: 'models_list', arguments: {} });
    t.falsy(result.isError, JSON.stringify(result));
    t.true(Array.isArray((result.structuredContent as { data?: unknown[] }).data), JSON.stringify(result.structuredContent).slice(0, 200));
    return me;
  } finally {
    await client.close();
  }
}

test('{base}/mcp: a tool called without a credential starts the SDK OAuth flow (dynamic registration), then the call succeeds', async (t) => {
  const me = await callAfterOAuth(t, new MemoryProvider());
  t.notRegex(me.client_id!, /^https:/);
});

test('{base}/mcp: the same with a client ID metadata document as client_id', async (t) => {
  const me = await callAfterOAuth(t, new MemoryProvider(documentUrl));
  t.is(me.client_id, documentUrl);
});

for (const mode of ['legacy', 'auto'] as const satisfies readonly VersionNegotiationMode[]) {
  test(`{base}/mcp: the v2 client (${mode === 'legacy' ? '2025-11-25' : '2026-07-28'}) meets the 401, completes OAuth through its provider, and retries the call`, async (t) => {
    const serverUrl = `${svc.baseUrl}/mcp`;
    const provider = new MemoryProvider(mode === 'auto' ? documentUrl : undefined);
    const transport = new TransportV2(new URL(serverUrl), { authProvider: provider });
    const client = new ClientV2({ name: 'svc-sdk-oauth-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
    await client.connect(transport);
    try {
      await t.throwsAsync(client.callTool({ name: 'models_list', arguments: {} }), { instanceOf: UnauthorizedErrorV2 });
      t.is(provider.authorizationUrl?.searchParams.get('resource'), serverUrl);
      await transport.finishAuth(await callbackOf(provider));
      t.is((await svc.client({ token: provider.tokens()!.access_token }).oauth.whoami()).resource, serverUrl);
      const result = await client.callTool({ name: 'models_list', arguments: {} });
      t.falsy(result.isError, JSON.stringify(result));
      t.true(Array.isArray((result.structuredContent as { data?: unknown[] }).data));
    } finally {
      await client.close();
    }
  });
}

/** A raw tools/call at /mcp with a bearer token: only the status and challenge matter here. */
async function callMcp(token: string) {
  const response = await fetch(`${svc.baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'models_list', arguments: {} } }),
  });
  return { status: response.status, challenge: response.headers.get('www-authenticate') ?? '', text: await response.text() };
}

/** A token from the code flow, bound to `resource` (or unbound): the SDK registers and builds the URL, the test picks the resource. */
async function tokenFor(resource: string | undefined): Promise<string> {
  const provider = new MemoryProvider();
  const serverUrl = `${svc.apiUrl}/api/mcp`;
  const started = await auth(provider, { serverUrl });
  if (started !== 'REDIRECT') throw new Error(`the SDK answered ${started}, not REDIRECT`);
  const url = provider.authorizationUrl!;
  if (resource === undefined) url.searchParams.delete('resource');
  else url.searchParams.set('resource', resource);
  const code = await approve(provider);
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    code_verifier: provider.codeVerifier(),
    redirect_uri: REDIRECT,
    client_id: provider.clientInformation()!.client_id,
  });
  const response = await fetch(`${svc.baseUrl}/oauth/token`, { method: 'POST', body });
  if (response.status !== 200) throw new Error(`token answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

test('{base}/mcp refuses a token bound to another resource with 401 invalid_token (RFC 6750); unbound and /mcp-bound tokens pass', async (t) => {
  for (const other of [`${svc.apiUrl}/api/mcp`, svc.baseUrl]) {
    const refused = await callMcp(await tokenFor(other));
    t.is(refused.status, 401, `${other}: ${refused.text}`);
    t.regex(refused.challenge, /^Bearer /);
    t.true(refused.challenge.includes('error="invalid_token"'), refused.challenge);
    t.true(refused.challenge.includes(`resource_metadata="${svc.baseUrl}/.well-known/oauth-protected-resource/mcp"`), refused.challenge);
  }
  for (const accepted of [undefined, `${svc.baseUrl}/mcp`]) {
    const answer = await callMcp(await tokenFor(accepted));
    t.is(answer.status, 200, `${accepted ?? 'unbound'}: ${answer.text}`);
  }
});
