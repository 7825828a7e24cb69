/**
 * On a server without x402 settings, /.well-known/x402 reads x402's default network tables in a
 * one-shot worker thread (x402-defaults-worker.ts), so the main thread never loads @x402/evm and
 * viem. When that thread fails (here its module does not load), the reader gets a clean 503 with
 * a stable code, the next reader gets a new thread rather than a cached failure, and the server
 * goes on.
 */
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/** Worker threads this process created (the server runs in it). */
let threadsCreated = 0;
process.on('worker', () => {
  threadsCreated += 1;
});
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ testSeams: { x402DefaultsWorkerModule: new URL('./helpers/unloadable-worker.ts', import.meta.url) } });
});
test.after.always(async () => {
  await svc?.close();
});

test('an x402 defaults worker that cannot load answers 503 discovery_documents_unavailable on every read, each a new try, and the server stays up', async (t) => {
  for (const path of ['/.well-known/x402', '/.well-known/x402.json', '/.well-known/x402']) {
    const before = threadsCreated;
    const response = await fetch(`${svc.baseUrl}${path}`);
    t.is(response.status, 503, path);
    const body = (await response.json()) as { code: string; error: string };
    t.is(body.code, 'discovery_documents_unavailable', path);
    t.regex(body.error, /try again/, path);
    t.true(threadsCreated > before, `${path}: a new worker was tried`);
  }
  t.is((await fetch(`${svc.baseUrl}/healthz`)).status, 200);
});
