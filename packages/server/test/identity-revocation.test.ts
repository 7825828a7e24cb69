import test from 'ava';
import * as oauth from 'oauth4webapi';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * RFC 7009 revocation driven by an independent client library (oauth4webapi), and the per-address
 * limit of client registration. Refused tokens are checked through the real resource server.
 */
const REGISTER_LIMIT = 4;
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_OAUTH_REGISTER_RATE_PER_MINUTE: String(REGISTER_LIMIT), SVC_TRUST_PROXY: 'true' } });
});
test.after.always(async () => {
  await svc?.close();
});

const insecure = { [oauth.allowInsecureRequests]: true };
const REDIRECT = 'http://127.0.0.1:53682/callback';
/** Each test registers from its own address, so the registration limit is only met where meant. */
const from = (ip: string) => ({ ...insecure, headers: { 'x-forwarded-for': ip } });

async function discover(): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(svc.baseUrl);
  return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }));
}

async function publicSession(as: oauth.AuthorizationServer, ip: string) {
  const client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }, from(ip)),
  );
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(as.authorization_endpoint!);
  for (const [name, value] of Object.entries({
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'st',
  }))
    url.searchParams.set(name, value);
  const callback = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!);
  const params = oauth.validateAuthResponse(as, client, callback, 'st');
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
  );
  return { client, tokens };
}

const whoamiStatus = async (token: string) => (await fetch(`${svc.baseUrl}/v1/whoami`, { headers: { authorization: `Bearer ${token}` } })).status;

test('the RFC 8414 metadata advertises the revocation endpoint', async (t) => {
  const as = await discover();
  t.is(as.revocation_endpoint, `${svc.baseUrl}/oauth/revoke`);
  t.deepEqual(as.revocation_endpoint_auth_methods_supported, ['none', 'client_secret_basic', 'client_secret_post']);
});

test('revoking a refresh token kills its whole family: the access token and the refresh token are refused', async (t) => {
  const as = await discover();
  const { client, tokens } = await publicSession(as, '192.0.2.10');
  t.is(await whoamiStatus(tokens.access_token), 200);
  await oauth.processRevocationResponse(
    await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, { ...insecure, additionalParameters: { token_type_hint: 'refresh_token' } }),
  );
  t.is(await whoamiStatus(tokens.access_token), 401, 'the access token of the family is refused');
  const refresh = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
  t.is(refresh.status, 400);
  t.is(((await refresh.json()) as { error: string }).error, 'invalid_grant');
  // Revoking again (a retry) is not an error.
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));
  t.pass();
});

test('revoking an access token kills only that token; the refresh token still renews', async (t) => {
  const as = await discover();
  const { client, tokens } = await publicSession(as, '192.0.2.11');
  // No hint, and a wrong hint: the server finds the kind itself.
  await oauth.processRevocationResponse(
    await oauth.revocationRequest(as, client, oauth.None(), tokens.access_token, { ...insecure, additionalParameters: { token_type_hint: 'refresh_token' } }),
  );
  t.is(await whoamiStatus(tokens.access_token), 401);
  const renewed = await oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
  );
  t.is(await whoamiStatus(renewed.access_token), 200);
});

test('a confidential client must authenticate to revoke; with its secret it can; an unknown token answers 200', async (t) => {
  const as = await discover();
  const client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { token_endpoint_auth_method: 'client_secret_basic', grant_types: ['client_credentials'] },
      from('192.0.2.12'),
    ),
  );
  const secret = client.client_secret as string;
  const { access_token } = await oauth.processClientCredentialsResponse(
    as,
    client,
    await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(secret), {}, insecure),
  );
  const anonymous = await fetch(as.revocation_endpoint!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: access_token }),
  });
  t.is(anonymous.status, 401);
  t.is(((await anonymous.json()) as { error: string }).error, 'invalid_client');
  const wrongSecret = await oauth.revocationRequest(as, client, oauth.ClientSecretBasic('svc_cs_wrong'), access_token, insecure);
  t.is(wrongSecret.status, 401);
  t.regex(wrongSecret.headers.get('www-authenticate') ?? '', /^Basic/);
  t.is(await whoamiStatus(access_token), 200, 'refused revocations changed nothing');
  const revoked = await oauth.revocationRequest(as, client, oauth.ClientSecretPost(secret), access_token, insecure);
  t.is(revoked.status, 200);
  t.is(revoked.headers.get('cache-control'), 'no-store');
  await oauth.processRevocationResponse(revoked);
  t.is(await whoamiStatus(access_token), 401);
  await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.ClientSecretBasic(secret), 'not-a-token-we-issued', insecure));
  t.pass();
});

test('a token of another client is refused with invalid_grant; a missing token is invalid_request', async (t) => {
  const as = await discover();
  const mine = await publicSession(as, '192.0.2.13');
  const other = await publicSession(as, '192.0.2.13');
  const foreign = await oauth.revocationRequest(as, other.client, oauth.None(), mine.tokens.refresh_token!, insecure);
  t.is(foreign.status, 400);
  t.is(((await foreign.json()) as { error: string }).error, 'invalid_grant');
  t.is(await whoamiStatus(mine.tokens.access_token), 200);
  const missing = await fetch(as.revocation_endpoint!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: other.client.client_id }),
  });
  t.is(missing.status, 400);
  const body = (await missing.json()) as { error: string; request_id: string };
  t.is(body.error, 'invalid_request');
  t.truthy(body.request_id);
});

test('the client helper logs a session out: every token of it is refused', async (t) => {
  const session = await svc.client({ headers: { 'x-forwarded-for': '192.0.2.14' } }).oauth.login({ clientName: 'logout test' });
  t.is(await whoamiStatus(session.accessToken), 200);
  await svc.client().oauth.logout(session);
  t.is(await whoamiStatus(session.accessToken), 401);
  await t.throwsAsync(svc.client().oauth.refresh({ refreshToken: session.refreshToken!, clientId: session.clientId }));
});

test('client registration is limited per address: the limit passes, one past it is 429 with Retry-After', async (t) => {
  // Start well inside a minute window so the count is not split across two windows.
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 100));
  const register = (ip: string) =>
    fetch(`${svc.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    });
  for (let hit = 1; hit <= REGISTER_LIMIT; hit++) t.is((await register('198.51.100.200')).status, 201, `registration ${hit}`);
  const refused = await register('198.51.100.200');
  t.is(refused.status, 429);
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  const body = (await refused.json()) as { code: string; request_id: string };
  t.is(body.code, 'rate_limited');
  t.truthy(body.request_id);
  t.is((await register('198.51.100.201')).status, 201, 'another address has its own count');
});
