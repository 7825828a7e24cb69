import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { createClient } from '@svc/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { forward, relay } from './helpers/forward.ts';

/**
 * A completion whose answer is lost on the way: a proxy in front of the real server forwards the
 * first completion POST, lets the server record it, then drops the connection without answering.
 * The client must retry, get the first record back, and publish the file; one pull is counted.
 */
const ARTIFACT = 'prompt-injection-rules';
const FILE = 'rules.jsonl';

let svc: TestServer;
let proxy: http.Server;
let proxyUrl = '';
let completionsToDrop = 0;
let completionsSeen = 0;

const listen = (server: http.Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
  proxy = http.createServer(async (request, response) => {
    const upstream = await forward(request, svc.apiUrl);
    const body = Buffer.from(await upstream.arrayBuffer());
    if (request.method === 'POST' && request.url?.startsWith('/api/download-completions/')) {
      completionsSeen++;
      if (completionsToDrop > 0) {
        completionsToDrop--;
        // The server has answered and recorded the pull; the client never hears of it.
        request.socket.destroy();
        return;
      }
    }
    await relay(response, upstream, body);
  });
  proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
});

test.after.always(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await svc?.close();
});

test.serial('a completion whose answer was lost is retried: the first record comes back, the file is published, one pull counted', async (t) => {
  const before = (await svc.client().catalog.artifact({ params: { id: ARTIFACT } })).downloads;
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-retry-'));
  const destination = path.join(directory, FILE);
  completionsToDrop = 1;
  completionsSeen = 0;
  // The client's own retry setting is 0: a completion is retried regardless, because a repeat is safe.
  const client = createClient({ apiUrl: proxyUrl, baseUrl: proxyUrl, retry: 0, storagePolicy: { hosts: [new URL(svc.apiUrl).host], allowHttpLoopback: true } });
  const file = await client.catalog.verifiedDownload({ artifactId: ARTIFACT, path: FILE, destination });
  t.is(completionsSeen, 2, 'posted twice: the lost one and its retry');
  t.is(file.completion.status, 'already-recorded');
  t.is(file.sha256, (await client.catalog.downloadPlan({ params: { id: ARTIFACT } })).files.find((entry) => entry.path === FILE)!.sha256);
  t.true((await readFile(destination)).length > 0);
  t.deepEqual(await readdir(directory), [FILE], 'published, no temporary file left');
  t.is((await svc.client().catalog.artifact({ params: { id: ARTIFACT } })).downloads, before + 1, 'counted once');
});
