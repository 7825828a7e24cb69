import test from 'ava';
import { createPkcePair } from '@svc/client';
import { freePort } from '@svc/testing/free-port';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * Two replicas sharing SVC_SIGNING_SECRET and the public URL agree on every signed artefact: a
 * code from one is redeemed at the other and its tokens work at both. Replica B signs codes that
 * live 3 s. Against PostgreSQL (TEST_DATABASE_URL) the two also share one database, so a code is
 * spent once across both and the per-IP limit is counted once for both; the embedded database
 * cannot be shared between processes, so there `peer` is replica A itself.
 */
const SECRET = 'replica-test-secret-0123456789-abcdefghij';
const LIMIT = 5;
let database: TestDatabase;
let a: TestServer;
let b: TestServer;

/** Replicas behind one load balancer share the public URL (the issuer); tests reach each directly. */
let urlA = '';
let urlB = '';
test.before(async () => {
  database = await createTestDatabase();
  const [portA, portB] = [await freePort(), await freePort()];
  urlA = `http://127.0.0.1:${portA}`;
  urlB = `http://127.0.0.1:${portB}`;
  const env = {
    SVC_SIGNING_SECRET: SECRET,
    SVC_PUBLIC_URL: urlA,
    SVC_TRUST_PROXY: 'true',
    SVC_OAUTH_TOKEN_RATE_PER_MINUTE: String(LIMIT),
    SVC_OAUTH_REGISTER_RATE_PER_MINUTE: String(LIMIT),
  };
  a = await startTestServer({ database, env: { ...env, SVC_PORT: String(portA) } });
  b = await startTestServer({
    database: database.kind === 'postgres' ? database : undefined,
    env: { ...env, SVC_PORT: String(portB), SVC_OAUTH_CODE_TTL_SECONDS: '3' },
  });
  peer = database.kind === 'postgres' ? urlB : urlA;
});
/** The replica that shares A's database. */
let peer = '';
test.after.always(async () => {
  await a?.close();
  await b?.close();
  await database?.drop();
});

const REDIRECT = 'http://127.0.0.1:53682/callback';

async function code(server: string, clientId: string, challenge: string): Promise<string> {
  const url = new URL(`${server}/oauth/authorize`);
  for (const [name, value] of Object.entries({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(name, value);
  const response = await fetch(url, { redirect: 'manual' });
  return new URL(response.headers.get('location')!).searchParams.get('code')!;
}

async function token(server: string, ip: string, fields: Record<string, string>) {
  const response = await fetch(`${server}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
    body: new URLSearchParams(fields),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, string> };
}

test.serial('a code from replica B is redeemed at A; a replay at a peer fails; an expired code fails', async (t) => {
  const registration = (await (
    await fetch(`${urlB}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    })
  ).json()) as { client_id: string };
  const pkce = await createPkcePair();
  const fields = {
    grant_type: 'authorization_code',
    code: await code(urlB, registration.client_id, pkce.challenge),
    code_verifier: pkce.verifier,
    redirect_uri: REDIRECT,
  };
  const redeemed = await token(urlA, '198.51.100.1', fields);
  t.is(redeemed.status, 200, JSON.stringify(redeemed.body));
  const me = await fetch(`${urlB}/v1/whoami`, { headers: { authorization: `Bearer ${redeemed.body.access_token}` } });
  t.is(me.status, 200, 'a token from A works at B');
  t.is((await token(peer, '198.51.100.1', fields)).body.error, 'invalid_grant', 'spent once across the replicas of one database');

  const late = await createPkcePair();
  const lateCode = await code(urlB, registration.client_id, late.challenge);
  // Codes live 3 s at B, counted in whole seconds (a 1 s code minted late in a second could expire
  // before a loaded machine redeemed it); 4.1 s is past any rounding.
  await new Promise((resolve) => setTimeout(resolve, 4100));
  const expired = await token(urlA, '198.51.100.1', { grant_type: 'authorization_code', code: lateCode, code_verifier: late.verifier, redirect_uri: REDIRECT });
  t.is(expired.status, 400);
  t.is(expired.body.error, 'invalid_grant');
  t.regex(expired.body.error_description!, /expired/);
});

test.serial('the per-IP token limit is counted in the database: the limit passes, one past it is 429 with Retry-After', async (t) => {
  // Start well inside a minute window so the count is not split across two windows.
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 100));
  const ip = '203.0.113.77';
  for (let hit = 1; hit <= LIMIT; hit++) {
    const answer = await token(hit % 2 ? urlA : peer, ip, { grant_type: 'client_credentials' });
    t.is(answer.status, 401, `hit ${hit} is counted but not limited`);
  }
  const refused = await token(urlA, ip, { grant_type: 'client_credentials' });
  t.is(refused.status, 429);
  t.is(refused.body.code, 'rate_limited');
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 60);
  t.is((await token(peer, ip, { grant_type: 'client_credentials' })).status, 429);
  t.is((await token(peer, '203.0.113.78', { grant_type: 'client_credentials' })).status, 401, 'another address has its own count');
});

test.serial('the per-IP registration limit is shared by the replicas: the limit passes, one past it is 429 at either', async (t) => {
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 100));
  const register = (server: string, ip: string) =>
    fetch(`${server}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    });
  const ip = '203.0.113.90';
  for (let hit = 1; hit <= LIMIT; hit++) t.is((await register(hit % 2 ? urlA : peer, ip)).status, 201, `registration ${hit}`);
  const refused = await register(peer, ip);
  t.is(refused.status, 429);
  t.truthy(refused.headers.get('retry-after'));
  t.is((await register(urlA, ip)).status, 429);
});
