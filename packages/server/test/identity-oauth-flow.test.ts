import test from 'ava';
import * as oauth from 'oauth4webapi';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The whole OAuth surface driven by an independent client library (oauth4webapi): discovery,
 * registration, authorization code + PKCE, token, refresh, client credentials, then calls.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const insecure = { [oauth.allowInsecureRequests]: true };
const REDIRECT = 'http://127.0.0.1:53682/callback';

async function discover(): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(svc.baseUrl);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
}

/** Follows the auto-approving authorization endpoint without a browser. */
async function authorize(
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  challenge: string,
  state: string,
  extra: Record<string, string> = {},
): Promise<URL> {
  const url = new URL(as.authorization_endpoint!);
  for (const [name, value] of Object.entries({
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    ...extra,
  }))
    url.searchParams.set(name, value);
  const response = await fetch(url, { redirect: 'manual' });
  if (response.status !== 302) throw new Error(`authorize answered ${response.status}: ${await response.text()}`);
  return new URL(response.headers.get('location')!);
}

test('discovery: RFC 8414 and RFC 9728 documents agree with each other and with the endpoints', async (t) => {
  const as = await discover();
  t.is(as.issuer, svc.baseUrl);
  t.deepEqual(as.code_challenge_methods_supported, ['S256']);
  t.deepEqual(as.grant_types_supported, ['authorization_code', 'client_credentials', 'refresh_token']);
  t.deepEqual(as.token_endpoint_auth_methods_supported, ['none', 'client_secret_basic', 'client_secret_post']);
  t.true(as.scopes_supported!.includes('inference:invoke'));
  for (const path of ['/.well-known/oauth-authorization-server/mcp', '/mcp/.well-known/oauth-authorization-server']) {
    t.deepEqual(await (await fetch(`${svc.baseUrl}${path}`)).json(), await (await fetch(`${svc.baseUrl}/.well-known/oauth-authorization-server`)).json(), path);
  }
  const resource = await oauth.processResourceDiscoveryResponse(new URL(svc.baseUrl), await oauth.resourceDiscoveryRequest(new URL(svc.baseUrl), insecure));
  t.deepEqual(resource.authorization_servers, [svc.baseUrl]);
  // Each MCP endpoint's RFC 9728 document is where a client derives it from the endpoint's URL,
  // and names that endpoint as its resource: {api}/api/mcp (the blackboard) and {base}/mcp, whose
  // /mcp/.well-known/ alias is the same document.
  const blackboard = new URL(`${svc.apiUrl}/api/mcp`);
  const blackboardDocument = await oauth.processResourceDiscoveryResponse(blackboard, await oauth.resourceDiscoveryRequest(blackboard, insecure));
  t.is(blackboardDocument.resource, blackboard.href);
  const endpoint = new URL(`${svc.baseUrl}/mcp`);
  const mcp = await oauth.processResourceDiscoveryResponse(endpoint, await oauth.resourceDiscoveryRequest(endpoint, insecure));
  t.is(mcp.resource, endpoint.href);
  t.deepEqual(mcp.authorization_servers, [svc.baseUrl]);
  t.deepEqual(await (await fetch(`${svc.baseUrl}/mcp/.well-known/oauth-protected-resource`)).json(), mcp);
  // The 401 challenge of a protected route names the resource metadata the client just read.
  const denied = await fetch(`${svc.baseUrl}/v1/whoami`);
  t.is(denied.status, 401);
  t.regex(denied.headers.get('www-authenticate')!, new RegExp(`resource_metadata="${svc.baseUrl}/.well-known/oauth-protected-resource"`));
});

test('public client: register, authorization code + PKCE, token, call, refresh with rotation, call again', async (t) => {
  const as = await discover();
  const client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'flow test' }, insecure),
  );
  t.is(client.token_endpoint_auth_method, 'none');
  t.is(client.client_secret, undefined);
  t.deepEqual(client.grant_types, ['authorization_code', 'refresh_token']);

  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const callback = await authorize(as, client, await oauth.calculatePKCECodeChallenge(verifier), state);
  t.is(`${callback.origin}${callback.pathname}`, REDIRECT);
  t.is(callback.searchParams.get('iss'), svc.baseUrl);
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
  );
  t.is(tokens.token_type, 'bearer');
  t.true(typeof tokens.refresh_token === 'string');
  t.true(tokens.expires_in! > 0);

  const agent = svc.client({ token: tokens.access_token });
  const me = await agent.oauth.whoami();
  t.is(me.kind, 'agent');
  t.is(me.credential, 'oauth_access_token');
  t.regex(me.id, /^agt_/);
  t.truthy(await agent.models.list(), 'an OAuth agent holds models:read');

  const renewed = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
  );
  t.not(renewed.refresh_token, tokens.refresh_token, 'a public client gets a new refresh token each time');
  const again = await svc.client({ token: renewed.access_token }).oauth.whoami();
  t.is(again.id, me.id, 'refresh renews the same agent identity');
});

test('a public client need not send client_id at the token endpoint', async (t) => {
  const as = await discover();
  const client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }, insecure),
  );
  const verifier = oauth.generateRandomCodeVerifier();
  const callback = await authorize(as, client, await oauth.calculatePKCECodeChallenge(verifier), 's1');
  const response = await fetch(as.token_endpoint!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, code_verifier: verifier, redirect_uri: REDIRECT }),
  });
  t.is(response.status, 200);
  t.is(response.headers.get('cache-control'), 'no-store');
  t.is(response.headers.get('pragma'), 'no-cache');
  const body = (await response.json()) as { access_token: string; scope: string };
  t.true(body.scope.split(' ').includes('models:read'));
});

test('machine client: registered with a secret, client_credentials with Basic and with post, no refresh token, durable identity', async (t) => {
  const as = await discover();
  const client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { token_endpoint_auth_method: 'client_secret_basic', grant_types: ['client_credentials'], client_name: 'batch worker' },
      insecure,
    ),
  );
  t.true(typeof client.client_secret === 'string');
  t.deepEqual(client.grant_types, ['client_credentials']);
  const basic = await oauth.processClientCredentialsResponse(
    as,
    client,
    await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(client.client_secret as string), {}, insecure),
  );
  t.is(basic.refresh_token, undefined);
  const post = await oauth.processClientCredentialsResponse(
    as,
    client,
    await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretPost(client.client_secret as string), { scope: 'models:read' }, insecure),
  );
  t.is(post.scope, 'models:read');
  const first = await svc.client({ token: basic.access_token }).oauth.whoami();
  const second = await svc.client({ token: post.access_token }).oauth.whoami();
  t.is(first.kind, 'agent');
  t.is(first.id, second.id, 'a machine client is one durable agent');
  t.deepEqual(second.scopes, ['models:read']);
  // A narrowed token cannot reach a route needing another scope.
  t.truthy(await svc.client({ token: post.access_token }).models.list());
  const jobsOnly = await oauth.processClientCredentialsResponse(
    as,
    client,
    await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretPost(client.client_secret as string), { scope: 'jobs:read' }, insecure),
  );
  const error = await t.throwsAsync(svc.client({ token: jobsOnly.access_token }).models.list());
  t.is((error as { status?: number }).status, 403);
  t.is((error as { code?: string }).code, 'insufficient_scope:models:read');
  const wrong = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic('svc_cs_wrong'), {}, insecure);
  t.is(wrong.status, 401);
  t.regex(wrong.headers.get('www-authenticate') ?? '', /^Basic/);
  t.is(((await wrong.json()) as { error: string }).error, 'invalid_client');
});

test('the operator token is never issued and client_credentials is refused to public clients', async (t) => {
  const as = await discover();
  const client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT] }, insecure),
  );
  const refused = await fetch(as.token_endpoint!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.client_id }),
  });
  t.is(refused.status, 401);
  t.is(((await refused.json()) as { error: string }).error, 'invalid_client');
  const verifier = oauth.generateRandomCodeVerifier();
  const callback = await authorize(as, client, await oauth.calculatePKCECodeChallenge(verifier), 's2');
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), oauth.validateAuthResponse(as, client, callback, 's2'), REDIRECT, verifier, insecure),
  );
  t.not(tokens.access_token, svc.operatorToken);
  const me = await svc.client({ token: tokens.access_token }).oauth.whoami();
  t.not(me.kind, 'operator');
  const metrics = await t.throwsAsync(svc.client({ token: tokens.access_token }).system.metrics());
  t.is((metrics as { status?: number }).status, 403);
});
