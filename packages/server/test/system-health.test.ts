import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

// Two pool connections, so the test can hold every one of them on PostgreSQL too (PGlite has one session).
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_DATABASE_POOL_MAX: '2' } });
});
test.after.always(async () => {
  await svc?.close();
});

const getJson = async (url: string) => {
  const started = performance.now();
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as { status: string; database: { status: string; age_ms: number } }, ms: performance.now() - started };
};

test('/healthz answers from the latest database check while the database is busy; /readyz waits and gives up after 2 s', async (t) => {
  const first = await getJson(`${svc.baseUrl}/healthz`);
  t.is(first.status, 200);
  t.is(first.body.database.status, 'ok');
  // Every connection sleeps 3.5 s: a ping made now could only queue behind them.
  const sleepers = Array.from({ length: 2 }, () => svc.server.database.sequelize.query('SELECT pg_sleep(3.5)'));
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  const stale = await getJson(`${svc.baseUrl}/healthz`);
  t.is(stale.status, 200, 'liveness answers from the last check');
  t.true(stale.body.database.age_ms >= 1_000, `age ${stale.body.database.age_ms} ms`);
  t.true(stale.ms < 1_000, `answered in ${stale.ms.toFixed(0)} ms while the database was busy`);
  const ready = await getJson(`${svc.baseUrl}/readyz`);
  t.is(ready.status, 503, 'readiness checks anew, and a ping over 2 s counts as unreachable');
  t.is(ready.body.database.status, 'unreachable');
  t.true(ready.ms >= 1_900, `readyz waited ${ready.ms.toFixed(0)} ms`);
  // The failed check is now the latest: liveness reports it rather than an old "ok".
  const degraded = await getJson(`${svc.baseUrl}/healthz`);
  t.is(degraded.status, 503);
  t.is(degraded.body.status, 'degraded');
  await Promise.all(sleepers);
  const again = await getJson(`${svc.baseUrl}/readyz`);
  t.is(again.status, 200);
  t.is(again.body.database.age_ms, 0);
  const recovered = await getJson(`${svc.baseUrl}/healthz`);
  t.is(recovered.status, 200);
});

test('/v1/metrics carries the live heap after the latest full collection', async (t) => {
  const metrics = await svc.operator.system.metrics();
  t.regex(metrics, /^# TYPE svc_nodejs_heap_live_bytes gauge$/m);
  t.regex(metrics, /^svc_nodejs_heap_live_bytes \d+$/m);
});
