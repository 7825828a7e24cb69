import test from 'ava';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { acceptsResource } from '../src/features/identity/index.ts';

/**
 * RFC 8707 resource indicators on every grant: the requested resource is checked against the
 * three svc serves, bound to the token as its audience, carried through refresh rotation, and a
 * grant bound to one resource cannot be turned into a token for another. Tokens asked for
 * without `resource` stay unbound, as before.
 */
let svc: TestServer;
let resources: { base: string; mcp: string; apiMcp: string };
test.before(async () => {
  svc = await startTestServer();
  resources = { base: svc.baseUrl, mcp: `${svc.baseUrl}/mcp`, apiMcp: `${svc.apiUrl}/api/mcp` };
});
test.after.always(async () => {
  await svc?.close();
});

const REDIRECT = 'http://127.0.0.1:53682/callback';

async function form(path: string, fields: Record<string, string | string[] | undefined>, headers: Record<string, string> = {}) {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const one of value === undefined ? [] : [value].flat()) body.append(name, one);
  const response = await fetch(`${svc.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

async function publicClient(): Promise<string> {
  const response = await fetch(`${svc.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'resource test' }),
  });
  return ((await response.json()) as { client_id: string }).client_id;
}

function authorizeUrl(clientId: string, challenge: string, resource?: string | string[]): URL {
  const url = new URL(`${svc.baseUrl}/oauth/authorize`);
  const fields = { client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', state: 's' };
  for (const [name, value] of Object.entries(fields)) url.searchParams.set(name, value);
  for (const value of resource === undefined ? [] : [resource].flat()) url.searchParams.append('resource', value);
  return url;
}

/** Runs the auto-approving authorize endpoint; answers the callback URL's parameters. */
async function authorize(clientId: string, challenge: string, resource?: string | string[]): Promise<URLSearchParams> {
  const response = await fetch(authorizeUrl(clientId, challenge, resource), { redirect: 'manual' });
  if (response.status !== 302) throw new Error(`authorize answered ${response.status}: ${await response.text()}`);
  return new URL(response.headers.get('location')!).searchParams;
}

async function codeFor(resource?: string | string[]) {
  const clientId = await publicClient();
  const verifier = oauth.generateRandomCodeVerifier();
  const callback = await authorize(clientId, await oauth.calculatePKCECodeChallenge(verifier), resource);
  return { clientId, verifier, code: callback.get('code')! };
}

const exchange = (grant: { clientId: string; verifier: string; code: string }, resource?: string | string[]) =>
  form('/oauth/token', {
    grant_type: 'authorization_code',
    client_id: grant.clientId,
    code: grant.code,
    code_verifier: grant.verifier,
    redirect_uri: REDIRECT,
    resource,
  });

const whoami = async (token: string) => svc.client({ token }).oauth.whoami();

test('authorization_code bound to {base}/mcp: the token carries it as its audience, and refresh keeps it', async (t) => {
  const grant = await codeFor(resources.mcp);
  const tokens = await exchange(grant, resources.mcp);
  t.is(tokens.status, 200, JSON.stringify(tokens.body));
  t.is(decodeJwt(tokens.body.access_token!).aud, resources.mcp);
  t.is((await whoami(tokens.body.access_token!)).resource, resources.mcp);

  // Refresh without resource keeps the binding; naming the same one is fine too.
  const renewed = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token });
  t.is(renewed.status, 200, JSON.stringify(renewed.body));
  t.is((await whoami(renewed.body.access_token!)).resource, resources.mcp);
  // Switching the family to another resource is refused, and the refresh token is not spent by it.
  const switched = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: renewed.body.refresh_token, resource: resources.apiMcp });
  t.is(switched.status, 400);
  t.is(switched.body.error, 'invalid_target');
  t.true(switched.body.error_description!.includes(resources.mcp), switched.body.error_description);
  const again = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: renewed.body.refresh_token, resource: resources.mcp });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.is((await whoami(again.body.access_token!)).resource, resources.mcp);
});

test('the token request may omit resource (the code carries it) but not switch it; a refused switch leaves the code usable', async (t) => {
  const grant = await codeFor(resources.apiMcp);
  const switched = await exchange(grant, resources.mcp);
  t.is(switched.status, 400);
  t.is(switched.body.error, 'invalid_target');
  const omitted = await exchange(grant);
  t.is(omitted.status, 200, JSON.stringify(omitted.body));
  t.is((await whoami(omitted.body.access_token!)).resource, resources.apiMcp);
});

test('a resource svc does not serve is invalid_target: at authorize (by redirect) and at the token endpoint', async (t) => {
  const clientId = await publicClient();
  const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
  for (const foreign of ['https://elsewhere.example/mcp', `${svc.baseUrl}/mcp/other`, `${svc.baseUrl}/mcp#fragment`, 'not a url', `${svc.apiUrl}/mcp-not`]) {
    const callback = await authorize(clientId, challenge, foreign);
    t.is(callback.get('error'), 'invalid_target', foreign);
    t.is(callback.get('code'), null);
    t.regex(callback.get('error_description')!, /is not served here/);
  }
  const grant = await codeFor();
  const refused = await exchange(grant, 'https://elsewhere.example/mcp');
  t.is(refused.status, 400);
  t.is(refused.body.error, 'invalid_target');
  t.true(refused.body.error_description!.includes(resources.mcp), 'the answer names the resources svc serves');
});

test('one resource per token: different repeated values are invalid_target, the same value repeated (up to 10) binds it, 11 are 422', async (t) => {
  const clientId = await publicClient();
  const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
  const two = await authorize(clientId, challenge, [resources.mcp, resources.apiMcp]);
  t.is(two.get('error'), 'invalid_target');
  t.regex(two.get('error_description')!, /bound to one resource/);

  const tenSame = await exchange(await codeFor(Array(10).fill(resources.mcp)), Array(10).fill(resources.mcp));
  t.is(tenSame.status, 200, JSON.stringify(tenSame.body));
  t.is((await whoami(tenSame.body.access_token!)).resource, resources.mcp);

  const eleven = await fetch(authorizeUrl(clientId, challenge, Array(11).fill(resources.mcp)), { redirect: 'manual' });
  t.is(eleven.status, 422);
  t.regex(await eleven.text(), /query\.resource/);
  const elevenAtToken = await exchange(await codeFor(), Array(11).fill(resources.mcp));
  t.is(elevenAtToken.status, 422, 'a wrongly shaped field is 422, as everywhere');
  t.is(elevenAtToken.body.code, 'validation_failed');
  t.regex(JSON.stringify(elevenAtToken.body), /body\.resource/);

  const mixedAtToken = await exchange(await codeFor(), [resources.mcp, resources.base]);
  t.is(mixedAtToken.status, 400);
  t.is(mixedAtToken.body.error, 'invalid_target');
});

test('any other parameter repeated at the token endpoint is refused (RFC 6749 3.2), not silently read as its last value', async (t) => {
  const grant = await codeFor();
  const repeated = await form('/oauth/token', {
    grant_type: ['authorization_code', 'authorization_code'],
    client_id: grant.clientId,
    code: grant.code,
    code_verifier: grant.verifier,
  });
  t.is(repeated.status, 422);
  t.regex(JSON.stringify(repeated.body), /body\.grant_type/);
  t.is((await exchange(grant)).status, 200, 'the refused request spent nothing');
});

test("the base URL binds with or without its trailing slash, in svc's spelling", async (t) => {
  const grant = await codeFor(`${resources.base}/`);
  const tokens = await exchange(grant, `${resources.base}/`);
  t.is(tokens.status, 200, JSON.stringify(tokens.body));
  t.is((await whoami(tokens.body.access_token!)).resource, resources.base);
});

test('without resource a token stays unbound (as before); an unbound code may be bound at the token endpoint', async (t) => {
  const unbound = await exchange(await codeFor());
  t.is(unbound.status, 200);
  t.is(decodeJwt(unbound.body.access_token!).aud, undefined);
  t.is((await whoami(unbound.body.access_token!)).resource, undefined);
  const refreshed = await form('/oauth/token', { grant_type: 'refresh_token', refresh_token: unbound.body.refresh_token });
  t.is((await whoami(refreshed.body.access_token!)).resource, undefined);

  const boundLater = await exchange(await codeFor(), resources.mcp);
  t.is(boundLater.status, 200, JSON.stringify(boundLater.body));
  t.is((await whoami(boundLater.body.access_token!)).resource, resources.mcp);
});

test('client_credentials binds the resource asked for and refuses a foreign one', async (t) => {
  const registered = await (
    await fetch(`${svc.baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token_endpoint_auth_method: 'client_secret_post', grant_types: ['client_credentials'] }),
    })
  ).json();
  const { client_id, client_secret } = registered as { client_id: string; client_secret: string };
  const bound = await form('/oauth/token', { grant_type: 'client_credentials', client_id, client_secret, resource: resources.apiMcp });
  t.is(bound.status, 200, JSON.stringify(bound.body));
  t.is((await whoami(bound.body.access_token!)).resource, resources.apiMcp);
  const foreign = await form('/oauth/token', { grant_type: 'client_credentials', client_id, client_secret, resource: 'https://elsewhere.example/' });
  t.is(foreign.status, 400);
  t.is(foreign.body.error, 'invalid_target');
});

test('acceptsResource: a bound token only at its resource (URLs compared canonically); unbound and other credentials everywhere', (t) => {
  const agent = { kind: 'agent', id: 'agt_x', scopes: [], credential: 'oauth_access_token' } as const;
  t.true(acceptsResource({ ...agent, resource: 'https://svc.example/mcp' }, 'https://svc.example/mcp'));
  t.true(acceptsResource({ ...agent, resource: 'https://svc.example' }, 'https://SVC.example:443/'));
  t.false(acceptsResource({ ...agent, resource: 'https://api.svc.example/api/mcp' }, 'https://svc.example/mcp'));
  t.false(acceptsResource({ ...agent, resource: 'https://svc.example' }, 'https://svc.example/mcp'));
  t.true(acceptsResource(agent, 'https://svc.example/mcp'));
  t.true(acceptsResource({ kind: 'agent', id: 'agt_x', scopes: [], credential: 'developer_key' }, 'https://svc.example/mcp'));
});
