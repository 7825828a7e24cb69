import test from 'ava';
import type { ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
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
}

/** The browser's part: follow the authorization URL (svc approves at once) and read the code off the redirect. */
async function approve(provider: MemoryProvider): Promise<string> {
  if (!provider.authorizationUrl) throw new Error('the SDK did not ask for authorization');
  const response = await fetch(provider.authorizationUrl, { redirect: 'manual' });
  if (response.status !== 302) throw new Error(`authorize answered ${response.status}: ${await response.text()}`);
  const callback = new URL(response.headers.get('location')!);
  if (`${callback.origin}${callback.pathname}` !== REDIRECT) throw new Error(`redirected to ${callback.href}`);
  return callback.searchParams.get('code')!;
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
