import test from 'ava';
import type { ServerResponse } from 'node:http';
import * as oauth from 'oauth4webapi';
import { clientMetadataDocumentLimits } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';

/**
 * Client ID metadata documents: the client_id is the https URL of the client's metadata, which
 * svc fetches through its SSRF-guarded fetcher. The documents are served by a real HTTPS server on
 * loopback, reached through the fetcher's test seam (names resolve through the test's table, the
 * test certificate is the trusted CA, exactly 127.0.0.1 is exempt from the address refusal).
 */
const REDIRECT = 'http://127.0.0.1:53682/callback';
const { maxBytes, timeoutMs } = clientMetadataDocumentLimits;
const names: Record<string, string> = { 'client.test': '127.0.0.1', 'private.test': '10.0.0.7' };
const hits = new Map<string, number>();
/** Downloads a client address may cause per minute (they count as registrations). */
const DOWNLOADS_PER_MINUTE = 4;
/** Each request comes from its own address (X-Forwarded-For), so only the limit's own test meets the limit. */
let addresses = 0;
const freshAddress = () => `198.51.100.${++addresses}`;
let source: HttpsSource;
let svc: TestServer;
let origin = '';

const urlOf = (path: string) => `${origin}${path}`;
const documentFor = (path: string, extra: Record<string, unknown> = {}) => ({
  client_id: urlOf(path),
  client_name: 'metadata document test',
  redirect_uris: [REDIRECT],
  ...extra,
});
/** A valid document whose JSON is exactly `size` bytes (padded in a member svc ignores). */
function documentOfSize(path: string, size: number): string {
  const bare = JSON.stringify(documentFor(path, { x_padding: '' }));
  return JSON.stringify(documentFor(path, { x_padding: 'x'.repeat(size - bare.length) }));
}
const json = (response: ServerResponse, body: string, headers: Record<string, string> = {}) =>
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers }).end(body);
/** A route that counts its requests, so a test sees whether svc fetched again or used its cache. */
const counted = (path: string, answer: (response: ServerResponse) => void) => (_request: unknown, response: ServerResponse) => {
  hits.set(path, (hits.get(path) ?? 0) + 1);
  answer(response);
};

test.before(async () => {
  const certificate = selfSignedCertificate(['client.test', 'private.test']);
  const routes: Record<string, Parameters<typeof startHttpsSource>[1][string]> = {};
  const serve = (path: string, answer: (response: ServerResponse) => void) => (routes[path] = counted(path, answer));
  serve('/cached.json', (response) => json(response, JSON.stringify(documentFor('/cached.json')), { 'cache-control': 'max-age=300' }));
  serve('/short-lived.json', (response) => json(response, JSON.stringify(documentFor('/short-lived.json')), { 'cache-control': 'max-age=1' }));
  // Held 1.5 s: all five concurrent uses reach svc while the one download is under way, even on a loaded machine.
  serve('/slow-no-store.json', (response) => {
    const timer = setTimeout(() => json(response, JSON.stringify(documentFor('/slow-no-store.json')), { 'cache-control': 'no-store' }), 1500);
    response.on('close', () => clearTimeout(timer));
  });
  serve('/limit-no-store.json', (response) => json(response, JSON.stringify(documentFor('/limit-no-store.json')), { 'cache-control': 'no-store' }));
  serve('/limit-cached.json', (response) => json(response, JSON.stringify(documentFor('/limit-cached.json')), { 'cache-control': 'max-age=300' }));
  // Revalidated: ETag "v1" for 1 s; a conditional request that still holds "v1" gets a 304.
  routes['/etag.json'] = (request, response) => {
    const revalidation = request.headers['if-none-match'] === '"v1"';
    const path = revalidation ? '/etag.json 304' : '/etag.json';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (revalidation) response.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=1' }).end();
    else json(response, JSON.stringify(documentFor('/etag.json')), { etag: '"v1"', 'cache-control': 'max-age=1' });
  };
  // Served once with a validator, then gone: the revalidation fails and the copy is dropped.
  serve('/etag-gone.json', (response) => {
    if ((hits.get('/etag-gone.json') ?? 0) > 1) response.writeHead(404).end();
    else json(response, JSON.stringify(documentFor('/etag-gone.json')), { etag: '"g1"', 'cache-control': 'max-age=1' });
  });
  serve('/no-store.json', (response) => json(response, JSON.stringify(documentFor('/no-store.json')), { 'cache-control': 'no-store' }));
  serve('/at-cap.json', (response) => json(response, documentOfSize('/at-cap.json', maxBytes)));
  serve('/over-cap.json', (response) => json(response, documentOfSize('/over-cap.json', maxBytes + 1)));
  serve('/over-cap-chunked.json', (response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    const body = documentOfSize('/over-cap-chunked.json', maxBytes + 1);
    response.write(body.slice(0, 4000));
    response.end(body.slice(4000));
  });
  serve('/wrong-id.json', (response) => json(response, JSON.stringify(documentFor('/wrong-id.json', { client_id: urlOf('/someone-else.json') }))));
  serve('/redirect.json', (response) => response.writeHead(302, { location: '/cached.json' }).end());
  serve('/bad-redirect-uri.json', (response) =>
    json(response, JSON.stringify(documentFor('/bad-redirect-uri.json', { redirect_uris: ['http://evil.example/cb'] }))),
  );
  serve('/secret.json', (response) => json(response, JSON.stringify(documentFor('/secret.json', { token_endpoint_auth_method: 'client_secret_basic' }))));
  serve('/not-json.json', (response) => json(response, '<html>hello</html>'));
  serve('/slow.json', (response) => {
    const timer = setTimeout(() => json(response, JSON.stringify(documentFor('/slow.json'))), timeoutMs + 3000);
    response.on('close', () => clearTimeout(timer));
  });
  source = await startHttpsSource(certificate, routes);
  origin = `https://client.test:${source.port}`;
  const lookup = async (hostname: string) => {
    const address = names[hostname];
    if (!address) throw new Error(`ENOTFOUND ${hostname}`);
    return [{ address, family: 4 }];
  };
  svc = await startTestServer({
    env: { SVC_OAUTH_REGISTER_RATE_PER_MINUTE: String(DOWNLOADS_PER_MINUTE), SVC_TRUST_PROXY: 'true' },
    testSeams: { clientMetadataFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
  });
});
test.after.always(async () => {
  await svc?.close();
  await source?.close();
});

async function authorize(clientId: string, challenge: string, redirectUri = REDIRECT, address = freshAddress()) {
  const url = new URL(`${svc.baseUrl}/oauth/authorize`);
  const fields = {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 's',
  };
  for (const [name, value] of Object.entries(fields)) url.searchParams.set(name, value);
  const response = await fetch(url, { redirect: 'manual', headers: { 'x-forwarded-for': address } });
  const text = await response.text();
  return {
    status: response.status,
    location: response.headers.get('location') ? new URL(response.headers.get('location')!) : undefined,
    body: response.status === 400 ? (JSON.parse(text) as { error: string; error_description: string }) : undefined,
  };
}

const challenge = async () => {
  const verifier = oauth.generateRandomCodeVerifier();
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
};

async function refusal(t: import('ava').ExecutionContext, clientId: string, pattern: RegExp) {
  const answer = await authorize(clientId, (await challenge()).challenge);
  t.is(answer.status, 400, `${clientId}: ${JSON.stringify(answer.body)}`);
  t.is(answer.body?.error, 'invalid_client');
  t.regex(answer.body!.error_description, pattern);
  t.is(answer.location, undefined, 'a client svc cannot trust is not redirected to');
}

test('the authorization-server metadata advertises client ID metadata documents', async (t) => {
  const metadata = (await (await fetch(`${svc.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
  t.is(metadata.client_id_metadata_document_supported, true);
});

test('a document client: authorize and token with the URL as client_id; the document is fetched once while its max-age lasts', async (t) => {
  const clientId = urlOf('/cached.json');
  const pkce = await challenge();
  const answer = await authorize(clientId, pkce.challenge);
  t.is(answer.status, 302, JSON.stringify(answer.body));
  const code = answer.location!.searchParams.get('code')!;
  t.truthy(code);
  const token = await fetch(`${svc.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': freshAddress() },
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: pkce.verifier, redirect_uri: REDIRECT }),
  });
  const tokens = (await token.json()) as { access_token: string; refresh_token: string };
  t.is(token.status, 200, JSON.stringify(tokens));
  const me = await svc.client({ token: tokens.access_token }).oauth.whoami();
  t.is(me.client_id, clientId);
  t.regex(me.id, /^agt_/);
  t.is(hits.get('/cached.json'), 1, 'max-age=300: authorize fetched it, the token endpoint used the cache');
});

test('a document served with no-store is fetched at every use', async (t) => {
  for (let index = 0; index < 2; index += 1) {
    const answer = await authorize(urlOf('/no-store.json'), (await challenge()).challenge);
    t.is(answer.status, 302, JSON.stringify(answer.body));
  }
  t.is(hits.get('/no-store.json'), 2);
});

test('a cached document is fetched again once its max-age has passed', async (t) => {
  const use = async () => t.is((await authorize(urlOf('/short-lived.json'), (await challenge()).challenge)).status, 302);
  await use();
  await use();
  t.is(hits.get('/short-lived.json'), 1, 'fresh for 1 s');
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await use();
  t.is(hits.get('/short-lived.json'), 2, 'stale after max-age=1');
});

test('a stale document with an ETag is revalidated: a 304 keeps the copy; a failed revalidation refuses the client', async (t) => {
  const use = async (path: string) => (await authorize(urlOf(path), (await challenge()).challenge)).status;
  t.is(await use('/etag.json'), 302);
  t.is(await use('/etag-gone.json'), 302);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  t.is(await use('/etag.json'), 302);
  t.is(hits.get('/etag.json'), 1, 'downloaded whole once');
  t.is(hits.get('/etag.json 304'), 1, 'then revalidated with If-None-Match');
  t.is(await use('/etag.json'), 302, 'fresh again for max-age after the 304');
  t.is(hits.get('/etag.json 304'), 1);
  t.is(await use('/etag-gone.json'), 400, 'the document is gone: refused, not served from the stale copy');
});

test('concurrent first uses of one client share one download', async (t) => {
  const answers = await Promise.all(Array.from({ length: 5 }, async () => authorize(urlOf('/slow-no-store.json'), (await challenge()).challenge)));
  t.deepEqual(
    answers.map((answer) => answer.status),
    [302, 302, 302, 302, 302],
  );
  t.is(hits.get('/slow-no-store.json'), 1);
});

test(`downloads count as registrations: ${DOWNLOADS_PER_MINUTE} a minute per address pass, one more is 429; a cached document costs nothing`, async (t) => {
  // Start well inside a minute window so the count is not split across two windows.
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 100));
  const cached = urlOf('/limit-cached.json');
  t.is((await authorize(cached, (await challenge()).challenge)).status, 302, 'cached by another address');
  const address = '203.0.113.40';
  const use = async (clientId: string) => {
    const url = new URL(`${svc.baseUrl}/oauth/authorize`);
    const fields = {
      client_id: clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge: (await challenge()).challenge,
      code_challenge_method: 'S256',
    };
    for (const [name, value] of Object.entries(fields)) url.searchParams.set(name, value);
    return fetch(url, { redirect: 'manual', headers: { 'x-forwarded-for': address } });
  };
  for (let download = 1; download <= DOWNLOADS_PER_MINUTE; download++) t.is((await use(urlOf('/limit-no-store.json'))).status, 302, `download ${download}`);
  const refused = await use(urlOf('/limit-no-store.json'));
  t.is(refused.status, 429);
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  t.is(((await refused.json()) as { code: string }).code, 'rate_limited');
  t.is(hits.get('/limit-no-store.json'), DOWNLOADS_PER_MINUTE, 'the refused use downloaded nothing');
  t.is((await use(cached)).status, 302, 'a cached document needs no download, so no allowance');
});

test(`size cap: a document of exactly ${maxBytes} bytes is taken, one byte more is refused (declared or chunked)`, async (t) => {
  const at = await authorize(urlOf('/at-cap.json'), (await challenge()).challenge);
  t.is(at.status, 302, JSON.stringify(at.body));
  await refusal(t, urlOf('/over-cap.json'), new RegExp(`${maxBytes}`));
  await refusal(t, urlOf('/over-cap-chunked.json'), new RegExp(`${maxBytes}`));
});

test('the document must name itself: a different client_id is refused', async (t) => {
  await refusal(t, urlOf('/wrong-id.json'), /client_id is .*someone-else\.json.*must equal the URL/);
});

// Serial (AVA runs these first, alone), so no other test's connections are counted.
test.serial('a client_id URL that is not https, has no path, or is not canonical is refused before anything is fetched', async (t) => {
  const connections = source.connections;
  await refusal(t, `http://client.test:${source.port}/cached.json`, /uses http:; .*https URL only/);
  await refusal(t, `${origin}/`, /must have a path/);
  await refusal(t, `${origin}/a/../cached.json`, /not in canonical form/);
  await refusal(t, `https://user:pw@client.test:${source.port}/cached.json`, /user name or password/);
  t.is(source.connections, connections, 'no connection was opened');
});

test('the SSRF guard applies: a name resolving to a private address is refused', async (t) => {
  await refusal(t, `https://private.test:${source.port}/cached.json`, /not public unicast/);
});

test('redirects are not followed; a document that is not JSON, has a foreign redirect URI or a secret method is refused', async (t) => {
  await refusal(t, urlOf('/redirect.json'), /redirects are not followed/);
  await refusal(t, urlOf('/not-json.json'), /not JSON/);
  await refusal(t, urlOf('/bad-redirect-uri.json'), /redirect URI that is not accepted: http redirect URIs must use a loopback host/);
  await refusal(t, urlOf('/secret.json'), /token_endpoint_auth_method must be `none`/);
});

test("the redirect_uri must be one of the document's own", async (t) => {
  const answer = await authorize(urlOf('/cached.json'), (await challenge()).challenge, 'http://127.0.0.1:9/elsewhere');
  t.is(answer.status, 400);
  t.is(answer.body?.error, 'invalid_request');
  t.regex(answer.body!.error_description, /redirect_uri/);
});

test(`a document that does not arrive within ${timeoutMs} ms is refused at the deadline`, async (t) => {
  const started = performance.now();
  await refusal(t, urlOf('/slow.json'), new RegExp(`no answer within ${timeoutMs / 1000} s`));
  const elapsed = performance.now() - started;
  t.true(elapsed >= timeoutMs - 50 && elapsed < timeoutMs + 2500, `answered after ${Math.round(elapsed)} ms`);
});
