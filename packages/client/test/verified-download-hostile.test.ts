import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { createClient, SvcError, VerifiedDownloadError, type DownloadCheck } from '@svc/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { forward, relay } from './helpers/forward.ts';

/**
 * The hostile table: a proxy in front of the real server rewrites the download redirect, and a
 * fake object store (speaking plain HTTP like a storage endpoint) serves hostile bodies. Each case
 * must end with a VerifiedDownloadError naming the failed check, no file at the destination, no
 * leftover temporary file, no completion posted and no pull recorded.
 */
const ARTIFACT = 'support-tickets-sample';
const FILE = 'tickets.csv';

interface Scenario {
  redirect?: (real: { location: URL; token: string; fake: URL }) => { status: number; headers: Record<string, string>; body?: string };
  storage?: (response: http.ServerResponse, good: Buffer) => void;
}

let svc: TestServer;
let proxy: http.Server;
let storage: http.Server;
let proxyUrl = '';
let storageHost = '';
let good: Buffer;
let scenario: Scenario = {};
let completionsPosted = 0;

const listen = (server: http.Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
const close = (server: http.Server | undefined) =>
  new Promise<void>((resolve) => (server ? (server.closeAllConnections(), server.close(() => resolve())) : resolve()));

test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
  const first = await fetch(`${svc.apiUrl}/api/downloads/${ARTIFACT}/${FILE}`, { redirect: 'manual' });
  good = Buffer.from(await (await fetch(first.headers.get('location')!)).arrayBuffer());

  storage = http.createServer((request, response) => {
    if (scenario.storage) return scenario.storage(response, good);
    response.writeHead(200, { 'content-length': String(good.length), 'content-type': 'application/octet-stream' });
    response.end(good);
  });
  storageHost = `127.0.0.1:${await listen(storage)}`;

  proxy = http.createServer(async (request, response) => {
    if (request.method === 'POST' && request.url?.startsWith('/api/download-completions/')) completionsPosted++;
    const upstream = await forward(request, svc.apiUrl);
    if (request.url?.startsWith('/api/downloads/') && upstream.status === 302 && scenario.redirect) {
      const location = new URL(upstream.headers.get('location')!);
      const fake = new URL(`http://${storageHost}${location.pathname}${location.search}`);
      const answer = scenario.redirect({ location, token: upstream.headers.get('x-svc-completion-token')!, fake });
      response.writeHead(answer.status, answer.headers);
      response.end(answer.body ?? '');
      return;
    }
    await relay(response, upstream);
  });
  proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
});

test.after.always(async () => {
  await close(proxy);
  await close(storage);
  await svc?.close();
});

const redirectTo =
  (location: (real: { location: URL; token: string; fake: URL }) => string, options: { token?: boolean } = {}) =>
  (real: { location: URL; token: string; fake: URL }) => ({
    status: 302,
    headers: { location: location(real), ...(options.token === false ? {} : { 'x-svc-completion-token': real.token }) },
  });
const withField = (url: URL, name: string, value: string | undefined) => {
  const copy = new URL(url);
  if (value === undefined) copy.searchParams.delete(name);
  else copy.searchParams.set(name, value);
  return copy.toString();
};
const onGoogle = (url: URL, prefix = 'https://storage.googleapis.com') => `${prefix}${url.pathname.replace('/api/storage', '')}${url.search}`;

const hostile: Array<[string, Scenario, DownloadCheck]> = [
  ['http scheme', { redirect: redirectTo(({ fake }) => onGoogle(fake, 'http://storage.googleapis.com')) }, 'storage-scheme'],
  ['other host', { redirect: redirectTo(({ fake }) => onGoogle(fake, 'https://evil.test')) }, 'storage-host'],
  [
    'look-alike storage.googleapis.com.evil.test',
    { redirect: redirectTo(({ fake }) => onGoogle(fake, 'https://storage.googleapis.com.evil.test')) },
    'storage-host',
  ],
  ['look-alike evilstorage.googleapis.com', { redirect: redirectTo(({ fake }) => onGoogle(fake, 'https://evilstorage.googleapis.com')) }, 'storage-host'],
  ['allowed host on another port', { redirect: redirectTo(({ fake }) => fake.toString().replace(storageHost, '127.0.0.1:9')) }, 'storage-host'],
  ['userinfo in the URL', { redirect: redirectTo(({ fake }) => onGoogle(fake, 'https://user:secret@storage.googleapis.com')) }, 'storage-userinfo'],
  ['a fragment', { redirect: redirectTo(({ fake }) => `${fake}#part`) }, 'storage-fragment'],
  ...(['x-goog-algorithm', 'x-goog-credential', 'x-goog-date', 'x-goog-expires', 'x-goog-signedheaders', 'x-goog-signature', 'generation'] as const).map(
    (field) =>
      [`${field} missing`, { redirect: redirectTo(({ fake }) => withField(fake, field, undefined)) }, 'signed-url-field'] as [string, Scenario, DownloadCheck],
  ),
  ['x-goog-expires 0', { redirect: redirectTo(({ fake }) => withField(fake, 'x-goog-expires', '0')) }, 'signed-url-expires'],
  ['x-goog-expires 301', { redirect: redirectTo(({ fake }) => withField(fake, 'x-goog-expires', '301')) }, 'signed-url-expires'],
  ['missing completion token', { redirect: redirectTo(({ fake }) => fake.toString(), { token: false }) }, 'completion-token'],
  ['200 instead of 302', { redirect: () => ({ status: 200, headers: { 'content-type': 'text/csv' }, body: 'id,category,text\n' }) }, 'redirect-status'],
  [
    'storage answers 403',
    { redirect: redirectTo(({ fake }) => fake.toString()), storage: (response) => (response.writeHead(403), response.end('denied')) },
    'fetch-status',
  ],
  [
    'storage redirects elsewhere',
    {
      redirect: redirectTo(({ fake }) => fake.toString()),
      storage: (response) => (response.writeHead(302, { location: 'https://evil.test/x' }), response.end()),
    },
    'fetch-status',
  ],
  [
    'content length differing from the plan',
    {
      redirect: redirectTo(({ fake }) => fake.toString()),
      storage: (response, bytes) => (
        response.writeHead(200, { 'content-length': String(bytes.length - 10) }), response.end(bytes.subarray(0, bytes.length - 10))
      ),
    },
    'content-length',
  ],
  [
    'a body one byte longer',
    { redirect: redirectTo(({ fake }) => fake.toString()), storage: (response, bytes) => (response.writeHead(200), response.write(bytes), response.end('x')) },
    'size',
  ],
  [
    'a body one byte shorter',
    {
      redirect: redirectTo(({ fake }) => fake.toString()),
      storage: (response, bytes) => (response.writeHead(200), response.end(bytes.subarray(0, bytes.length - 1))),
    },
    'size',
  ],
  [
    'a wrong digest (same length)',
    {
      redirect: redirectTo(({ fake }) => fake.toString()),
      storage: (response, bytes) => {
        const evil = Buffer.from(bytes);
        evil[0] = evil[0]! ^ 1;
        response.writeHead(200, { 'content-length': String(evil.length) });
        response.end(evil);
      },
    },
    'sha256',
  ],
];

async function downloadsRecorded(): Promise<number> {
  return (await svc.client().catalog.artifact({ params: { id: ARTIFACT } })).downloads;
}

for (const [name, current, check] of hostile) {
  test.serial(`hostile: ${name} -> ${check}, nothing published, no completion`, async (t) => {
    scenario = current;
    const directory = await mkdtemp(path.join(tmpdir(), 'svc-hostile-'));
    const destination = path.join(directory, 'out', FILE);
    const postedBefore = completionsPosted;
    const recordedBefore = await downloadsRecorded();
    const client = createClient({ apiUrl: proxyUrl, baseUrl: proxyUrl, retry: 0, storagePolicy: { hosts: [storageHost], allowHttpLoopback: true } });
    const error = await t.throwsAsync(client.catalog.verifiedDownload({ artifactId: ARTIFACT, path: FILE, destination }));
    t.true(error instanceof VerifiedDownloadError && SvcError.isInstance(error), String(error));
    t.is((error as VerifiedDownloadError).check, check, error?.message);
    t.regex(error!.message, /Nothing was published and no completion was posted/);
    const left = await readdir(directory, { recursive: true }).catch(() => []);
    t.deepEqual(left, [], 'no file, no temporary file and no directory left');
    t.is(completionsPosted, postedBefore, 'no completion posted');
    t.is(await downloadsRecorded(), recordedBefore, 'no pull recorded');
  });
}

test.serial('a plain-HTTP loopback store is refused unless allowHttpLoopback is set', async (t) => {
  scenario = { redirect: redirectTo(({ fake }) => fake.toString()) };
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-hostile-'));
  const strict = createClient({ apiUrl: proxyUrl, retry: 0, storagePolicy: { hosts: [storageHost] } });
  const error = await t.throwsAsync(strict.catalog.verifiedDownload({ artifactId: ARTIFACT, path: FILE, destination: path.join(directory, FILE) }));
  t.is((error as VerifiedDownloadError).check, 'storage-scheme');
  const byDefault = createClient({ apiUrl: proxyUrl, retry: 0 });
  const refused = await t.throwsAsync(
    byDefault.catalog.verifiedDownload({ artifactId: ARTIFACT, path: FILE, destination: path.join(directory, FILE), policy: { allowHttpLoopback: true } }),
  );
  t.is((refused as VerifiedDownloadError).check, 'storage-host', 'loopback needs the host listed too');
  t.deepEqual(await readdir(directory), []);
});

test.serial('the same proxy and fake store serving honest bytes: verified, attested, published', async (t) => {
  scenario = { redirect: redirectTo(({ fake }) => fake.toString()) };
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-honest-'));
  const destination = path.join(directory, 'nested', FILE);
  const postedBefore = completionsPosted;
  const progress: number[] = [];
  const client = createClient({ apiUrl: proxyUrl, retry: 0 });
  const file = await client.catalog.verifiedDownload({
    artifactId: ARTIFACT,
    path: FILE,
    destination,
    policy: { hosts: [storageHost], allowHttpLoopback: true },
    onProgress: (event) => progress.push(event.receivedBytes),
  });
  t.is(file.completion.status, 'client-attested');
  t.true(file.completion.localHashAttested);
  t.deepEqual(await readFile(destination), good);
  t.is(progress.at(-1), good.length);
  t.is(completionsPosted, postedBefore + 1);
  t.deepEqual(await readdir(path.join(directory, 'nested')), [FILE]);
});
