/**
 * The OpenAPI and llms documents are built in a worker thread (the build held the event loop
 * 550-830 ms). When that thread fails, a reader gets a clean 503 with a stable code, the next
 * reader gets a new attempt rather than a cached failure or a hang, and the server goes on.
 */
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ testSeams: { documentsWorkerModule: new URL('./helpers/unloadable-worker.ts', import.meta.url) } });
});
test.after.always(async () => {
  await svc?.close();
});

test('a documents worker that cannot load answers 503 discovery_documents_unavailable on every try, and the server stays up', async (t) => {
  for (const path of ['/openapi.json', '/llms.txt', '/llms-full.txt', '/openapi.json']) {
    const response = await fetch(`${svc.baseUrl}${path}`);
    t.is(response.status, 503, path);
    const body = (await response.json()) as { code: string; error: string };
    t.is(body.code, 'discovery_documents_unavailable', path);
    t.regex(body.error, /try again/, path);
  }
  const health = await fetch(`${svc.baseUrl}/healthz`);
  t.is(health.status, 200);
});
