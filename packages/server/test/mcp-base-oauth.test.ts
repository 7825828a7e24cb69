import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2, UnauthorizedError as UnauthorizedErrorV2 } from '@modelcontextprotocol/client';
import { mcpContract, urlFor } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const REDIRECT = 'http://127.0.0.1:9/callback';

/**
 * An MCP host's OAuth client provider, kept in memory. Its "browser" follows the authorization
 * URL once: svc approves at once and redirects to the callback with the code.
 */
class HeadlessProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  code: string | undefined;
  /** The callback's query (code, state, iss), as the host's redirect listener would receive it. */
  callback = new URLSearchParams();
  authorizationUrl: URL | undefined;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'headless mcp host',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  /** The v2 client binds the callback to the authorization server it discovered (SEP-2352). */
  discovery: unknown;
  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery as never;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
    const answer = await fetch(url, { redirect: 'manual' });
    const location = new URL(answer.headers.get('location') ?? '', url);
    this.callback = location.searchParams;
    this.code = location.searchParams.get('code') ?? undefined;
  }
}

const hosts = [
  {
    label: 'v1 SDK, 2025-11-25',
    unauthorized: UnauthorizedError as new (...args: never[]) => Error,
    connect(endpoint: URL, provider: HeadlessProvider) {
      const transport = new TransportV1(endpoint, { authProvider: provider });
      return { transport, client: new ClientV1({ name: 'oauth-host', version: '1' }) };
    },
  },
  {
    label: 'v2 client, 2026-07-28',
    unauthorized: UnauthorizedErrorV2 as new (...args: never[]) => Error,
    connect(endpoint: URL, provider: HeadlessProvider) {
      const transport = new TransportV2(endpoint, { authProvider: provider as never });
      return { transport, client: new ClientV2({ name: 'oauth-host', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } }) };
    },
  },
];

for (const host of hosts)
  test(`${host.label}: a tool needing a credential, called without one, runs the SDK's OAuth provider against svc; the retried call succeeds with a token bound to /mcp`, async (t) => {
    const endpoint = new URL(urlFor(svc.server.urls(), mcpContract.endpoint));
    const provider = new HeadlessProvider();
    const { transport, client } = host.connect(endpoint, provider) as {
      transport: { finishAuth(code: string | URLSearchParams): Promise<void> };
      client: ClientV1;
    };
    await client.connect(transport as never);
    try {
      const call = { name: 'inference_rerank', arguments: { query: 'postgres', documents: ['postgres replication', 'tea'] } };
      const refused = await t.throwsAsync(client.callTool(call));
      t.true(refused instanceof host.unauthorized, String(refused));
      // Discovery from the 401, registration, PKCE authorization with resource = the MCP URL.
      t.is(provider.authorizationUrl?.searchParams.get('resource'), endpoint.href.replace(/\/$/, ''));
      t.is(provider.authorizationUrl?.searchParams.get('code_challenge_method'), 'S256');
      t.truthy(provider.code, 'svc approved and redirected with a code');
      // The v2 client checks the callback's issuer (RFC 9207): it takes the whole callback query.
      await transport.finishAuth(host.label.startsWith('v2') ? provider.callback : provider.code!);
      t.truthy(provider.saved?.access_token);
      const answered = await client.callTool(call);
      t.falsy(answered.isError, JSON.stringify(answered.content));
      t.is((answered.structuredContent as { results: Array<{ index: number }> }).results[0]!.index, 0);
      // RFC 8707: the token svc issued is bound to /mcp, as whoami shows.
      const whoami = (await (await fetch(`${svc.baseUrl}/v1/whoami`, { headers: { authorization: `Bearer ${provider.saved!.access_token}` } })).json()) as {
        resource?: string;
      };
      t.is(whoami.resource?.replace(/\/$/, ''), endpoint.href.replace(/\/$/, ''));
    } finally {
      await client.close();
    }
  });
