import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { SignJWT } from 'jose';
import test from 'ava';
import pino from 'pino';
import { createPkcePair } from '@svc/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { createKey, signInAgent } from '@svc/testing/identity';

/** Security edges of OAuth and developer keys. The server logs at debug level into `logText`. */
let svc: TestServer;
let logText = '';
test.before(async () => {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logText += chunk.toString();
      done();
    },
  });
  svc = await startTestServer({ logger: pino({ level: 'debug' }, sink) });
});
test.after.always(async () => {
  await svc?.close();
});

const REDIRECT = 'http://127.0.0.1:53682/callback';
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});

async function registerPublic(redirectUris = [REDIRECT]): Promise<string> {
  const response = await fetch(`${svc.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: redirectUris }),
  });
  return ((await response.json()) as { client_id: string }).client_id;
}

async function authorizeRaw(params: Record<string, string>): Promise<Response> {
  const url = new URL(`${svc.baseUrl}/oauth/authorize`);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return fetch(url, { redirect: 'manual' });
}

async function codeFor(clientId: string, challenge: string, redirectUri = REDIRECT): Promise<string> {
  const response = await authorizeRaw({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  return new URL(response.headers.get('location')!).searchParams.get('code')!;
}

async function token(fields: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const response = await fetch(`${svc.baseUrl}/oauth/token`, form(fields));
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

const whoamiStatus = async (accessToken: string) => (await fetch(`${svc.baseUrl}/v1/whoami`, { headers: { authorization: `Bearer ${accessToken}` } })).status;

test('a wrong code_verifier is refused and burns the code', async (t) => {
  const clientId = await registerPublic();
  const pkce = await createPkcePair();
  const code = await codeFor(clientId, pkce.challenge);
  const wrong = await token({ grant_type: 'authorization_code', code, code_verifier: (await createPkcePair()).verifier, redirect_uri: REDIRECT });
  t.is(wrong.status, 400);
  t.is(wrong.body.error, 'invalid_grant');
  t.is(wrong.body.code, 'oauth_error:invalid_grant');
  const right = await token({ grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: REDIRECT });
  t.is(right.body.error, 'invalid_grant', 'the code was spent by the failed attempt');
});

test('a replayed code is refused and revokes the tokens issued from it', async (t) => {
  const clientId = await registerPublic();
  const pkce = await createPkcePair();
  const code = await codeFor(clientId, pkce.challenge);
  const fields = { grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: REDIRECT, client_id: clientId };
  const first = await token(fields);
  t.is(first.status, 200);
  t.is(await whoamiStatus(first.body.access_token!), 200);
  const replay = await token(fields);
  t.is(replay.status, 400);
  t.is(replay.body.error, 'invalid_grant');
  t.is(await whoamiStatus(first.body.access_token!), 401, 'the access token of the first exchange is revoked');
  t.is((await token({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token! })).body.error, 'invalid_grant');
});

test('redirect URIs: a mismatch at authorize is a direct 400, never a redirect; at the token endpoint invalid_grant', async (t) => {
  const clientId = await registerPublic([REDIRECT, 'https://app.example/cb']);
  const pkce = await createPkcePair();
  const base = { client_id: clientId, response_type: 'code', code_challenge: pkce.challenge, code_challenge_method: 'S256' };
  for (const redirect of ['http://127.0.0.1:53682/callback/', 'https://evil.example/cb', 'http://127.0.0.1:53682/callback?x=1']) {
    const response = await authorizeRaw({ ...base, redirect_uri: redirect });
    t.is(response.status, 400, redirect);
    t.is(response.headers.get('location'), null);
    t.is(((await response.json()) as { error: string }).error, 'invalid_request');
  }
  const missing = await authorizeRaw(base);
  t.is(missing.status, 400, 'two registered URIs: redirect_uri must be named');
  const code = await codeFor(clientId, pkce.challenge);
  const mismatch = await token({ grant_type: 'authorization_code', code, code_verifier: pkce.verifier, redirect_uri: 'https://app.example/cb' });
  t.is(mismatch.body.error, 'invalid_grant');
});

test('authorization errors go back to a trusted redirect URI with state and iss', async (t) => {
  const clientId = await registerPublic();
  const pkce = await createPkcePair();
  const cases: Array<[Record<string, string>, string]> = [
    [{ code_challenge: pkce.verifier, code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge_method: 'S256' }, 'invalid_request'],
    [{ code_challenge: pkce.challenge }, 'invalid_request'],
    [{ code_challenge: pkce.challenge, code_challenge_method: 'S256', response_type: 'token' }, 'unsupported_response_type'],
    [{ code_challenge: pkce.challenge, code_challenge_method: 'S256', scope: 'admin:everything' }, 'invalid_scope'],
  ];
  for (const [params, error] of cases) {
    const response = await authorizeRaw({ client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', state: 'st-1', ...params });
    t.is(response.status, 302, JSON.stringify(params));
    const location = new URL(response.headers.get('location')!);
    t.is(`${location.origin}${location.pathname}`, REDIRECT);
    t.is(location.searchParams.get('error'), error, JSON.stringify(params));
    t.is(location.searchParams.get('state'), 'st-1');
    t.is(location.searchParams.get('iss'), svc.baseUrl);
    t.is(location.searchParams.get('code'), null);
  }
});

test('a tampered or foreign signed client id is refused everywhere', async (t) => {
  const clientId = await registerPublic();
  const [header, payload, signature] = clientId.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as { r: string[] };
  claims.r = ['https://evil.example/cb'];
  const tampered = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
  const pkce = await createPkcePair();
  const authorize = await authorizeRaw({
    client_id: tampered,
    redirect_uri: 'https://evil.example/cb',
    response_type: 'code',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
  });
  t.is(authorize.status, 400);
  t.is(authorize.headers.get('location'), null);
  t.is(((await authorize.json()) as { error: string }).error, 'invalid_client');
  // A registration signed by another server (another secret) with the same shape.
  const foreign = await new SignJWT({ jti: 'foreign', m: 'client_secret_post', r: [], g: ['client_credentials'], s: ['models:read'] })
    .setProtectedHeader({ alg: 'HS256', typ: 'svc-client+jwt' })
    .setIssuedAt()
    .setIssuer(svc.baseUrl)
    .sign(randomBytes(32));
  for (const clientIdValue of [foreign, tampered, `${clientId}x`]) {
    const refused = await token({ grant_type: 'client_credentials', client_id: clientIdValue, client_secret: 'svc_cs_anything' });
    t.is(refused.status, 401);
    t.is(refused.body.error, 'invalid_client');
    t.is(refused.body.code, 'oauth_invalid_client');
  }
});

test('refresh-token reuse revokes the whole family', async (t) => {
  const { session } = await signInAgent(svc);
  const renewed = await token({ grant_type: 'refresh_token', refresh_token: session.refreshToken! });
  t.is(renewed.status, 200);
  t.is(await whoamiStatus(renewed.body.access_token!), 200);
  const reuse = await token({ grant_type: 'refresh_token', refresh_token: session.refreshToken! });
  t.is(reuse.status, 400);
  t.is(reuse.body.error, 'invalid_grant');
  t.is(await whoamiStatus(renewed.body.access_token!), 401, 'tokens of the family die with the reuse');
  t.is((await token({ grant_type: 'refresh_token', refresh_token: renewed.body.refresh_token! })).body.error, 'invalid_grant');
});

test('token endpoint input errors follow RFC 6749', async (t) => {
  t.is((await token({})).body.error, 'invalid_request');
  t.is((await token({ grant_type: 'password', username: 'a', password: 'b' })).body.error, 'unsupported_grant_type');
  t.is((await token({ grant_type: 'authorization_code', code: 'x' })).body.error, 'invalid_request');
  t.is((await token({ grant_type: 'authorization_code', code: 'not-a-code', code_verifier: 'a'.repeat(43) })).body.error, 'invalid_grant');
  t.is((await token({ grant_type: 'refresh_token', refresh_token: 'forged' })).body.error, 'invalid_grant');
  const json = await fetch(`${svc.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"grant_type":"client_credentials"}',
  });
  t.is(json.status, 415);
});

test('registration refuses bad metadata with RFC 7591 errors', async (t) => {
  const register = async (body: unknown) => {
    const response = await fetch(`${svc.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { error: string } };
  };
  t.is((await register({ redirect_uris: ['http://app.example/cb'] })).body.error, 'invalid_redirect_uri');
  t.is((await register({ redirect_uris: ['https://app.example/cb#frag'] })).body.error, 'invalid_redirect_uri');
  t.is((await register({ grant_types: ['authorization_code'] })).body.error, 'invalid_redirect_uri');
  t.is(
    (await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['client_credentials'] })).body.error,
    'invalid_client_metadata',
  );
  t.is((await register({ redirect_uris: [REDIRECT], scope: 'root' })).body.error, 'invalid_client_metadata');
  const ok = await register({ redirect_uris: ['com.example.app:/callback', 'https://app.example/cb'], unknown_field: 'ignored' });
  t.is(ok.status, 201);
  const uris = (count: number) => Array.from({ length: count }, (_, index) => `https://app.example/cb${index}`);
  t.is((await register({ redirect_uris: uris(10) })).status, 201, 'ten redirect URIs pass');
  t.is((await register({ redirect_uris: uris(11) })).status, 422, 'eleven do not');
  const big = (size: number) => JSON.stringify({ redirect_uris: [REDIRECT], padding: 'x'.repeat(size) });
  const fits = big(16_384 - big(0).length);
  t.is(Buffer.byteLength(fits), 16_384);
  const post = (body: string) => fetch(`${svc.baseUrl}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  t.is((await post(fits)).status, 201, 'a body of exactly 16 KiB passes');
  t.is((await post(big(16_384 - big(0).length + 1))).status, 413, 'one byte more is 413');
});

test('developer keys: malformed, bad checksum, unknown, revoked and rotated all answer 401 at once', async (t) => {
  const { client: agent } = await signInAgent(svc);
  const key = await createKey(agent, ['models:read']);
  const status = async (bearer: string) => (await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${bearer}` } })).status;
  t.is(await status(key.secret), 200);
  const last = key.secret.at(-1) === 'A' ? 'B' : 'A';
  t.is(await status(`${key.secret.slice(0, -1)}${last}`), 401, 'bad checksum');
  t.is(await status('svc_dk_short'), 401, 'malformed');
  const rotated = await agent.credentials.rotate({ params: { credential_id: key.credential.credential_id } });
  t.is(await status(key.secret), 401, 'rotated');
  t.is(await status(rotated.secret), 200);
  await agent.credentials.revoke({ params: { credential_id: rotated.credential.credential_id } });
  t.is(await status(rotated.secret), 401, 'revoked');
});

test('the generated signing secret is private to the server user (mode 0600)', async (t) => {
  const { stat } = await import('node:fs/promises');
  t.is((await stat(`${svc.database.dataDir}/signing-secret`)).mode & 0o777, 0o600);
});

test('secrets never appear in the logs', async (t) => {
  const { session, client: agent } = await signInAgent(svc);
  const key = await createKey(agent, ['models:read']);
  await svc.client({ token: key.secret }).models.list();
  const machine = await svc.client().oauth.register({ body: { token_endpoint_auth_method: 'client_secret_basic', grant_types: ['client_credentials'] } });
  const cc = await svc.client().oauth.clientCredentials({ clientId: machine.client_id, clientSecret: machine.client_secret! });
  await svc.client({ token: cc.accessToken }).oauth.whoami();
  await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key.secret}x` } });
  t.true(logText.includes('"route":"developerKeys.create"'), 'the server did log the requests');
  for (const secret of [key.secret, key.secret.slice(-38), session.accessToken, session.refreshToken!, machine.client_secret!, cc.accessToken]) {
    t.false(logText.includes(secret), `a secret leaked into the log: ${secret.slice(0, 12)}...`);
  }
});
