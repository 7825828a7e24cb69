import test from 'ava';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import { clientMetadataDocumentLimits } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { selfSignedCertificate } from './helpers/https-source.ts';

/**
 * The cache of client ID metadata documents is bounded: exactly `maxCachedDocuments` documents
 * stay cached, and one more evicts the least recently used. Every document is served with
 * max-age=300 by a real HTTPS server on loopback that counts the fetches of each path.
 */
const REDIRECT = 'http://127.0.0.1:53682/callback';
const CAPACITY = clientMetadataDocumentLimits.maxCachedDocuments;
const fetches = new Map<string, number>();
let svc: TestServer;
let server: ReturnType<typeof createServer>;
let origin = '';

test.before(async () => {
  const certificate = selfSignedCertificate(['clients.test']);
  server = createServer(certificate, (request, response) => {
    const path = new URL(request.url ?? '/', 'https://clients.test').pathname;
    fetches.set(path, (fetches.get(path) ?? 0) + 1);
    const body = JSON.stringify({ client_id: `${origin}${path}`, redirect_uris: [REDIRECT] });
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://clients.test:${(server.address() as AddressInfo).port}`;
  const lookup = async (hostname: string) => {
    if (hostname !== 'clients.test') throw new Error(`ENOTFOUND ${hostname}`);
    return [{ address: '127.0.0.1', family: 4 }];
  };
  // Every download counts as a registration of 127.0.0.1: allow all of them.
  svc = await startTestServer({
    env: { SVC_OAUTH_REGISTER_RATE_PER_MINUTE: '100000' },
    testSeams: { clientMetadataFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
  });
});
test.after.always(async () => {
  await svc?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

let challenge = '';
async function authorizeClient(index: number): Promise<void> {
  const url = new URL(`${svc.baseUrl}/oauth/authorize`);
  const fields = {
    client_id: `${origin}/clients/${index}.json`,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  for (const [name, value] of Object.entries(fields)) url.searchParams.set(name, value);
  const response = await fetch(url, { redirect: 'manual' });
  if (response.status !== 302) throw new Error(`client ${index}: authorize answered ${response.status}: ${await response.text()}`);
}
const fetchesOf = (index: number) => fetches.get(`/clients/${index}.json`) ?? 0;

test(`${CAPACITY} documents stay cached; the next one evicts the least recently used`, async (t) => {
  t.timeout(120_000);
  challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
  // Fill the cache: clients 0 and 1 first, in that order (the least recently used are then 0, then
  // 1); the rest a few at a time, in whatever order their downloads finish.
  await authorizeClient(0);
  await authorizeClient(1);
  for (let start = 2; start < CAPACITY; start += 16) {
    await Promise.all(Array.from({ length: Math.min(16, CAPACITY - start) }, (_, offset) => authorizeClient(start + offset)));
  }
  t.is(fetches.size, CAPACITY);
  // Client 0 is used again: served from the cache, and now the most recently used.
  await authorizeClient(0);
  t.is(fetchesOf(0), 1, `all ${CAPACITY} fit`);
  // One more document: the least recently used entry goes, and only it.
  await authorizeClient(CAPACITY);
  t.is(fetchesOf(CAPACITY), 1);
  await authorizeClient(0);
  t.is(fetchesOf(0), 1, 'the recently used one stayed');
  await authorizeClient(2);
  t.is(fetchesOf(2), 1, 'an entry that was not the oldest stayed');
  await authorizeClient(1);
  t.is(fetchesOf(1), 2, 'the least recently used one was evicted and is fetched again');
});
