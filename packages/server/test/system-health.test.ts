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
  return {
    status: response.status,
    body: (await response.json()) as { status: string; database: { status: string; age_ms: number } },
    ms: performance.now() - started,
  };
};

test('/healthz answers from the latest database check while the database is busy; /readyz waits for a check of its own', async (t) => {
  const first = await getJson(`${svc.baseUrl}/healthz`);
  t.is(first.status, 200);
  t.is(first.body.database.status, 'ok');
  // Every connection sleeps 3 s: a ping made now could only queue behind them.
  const sleepers = Array.from({ length: 2 }, () => svc.server.database.sequelize.query('SELECT pg_sleep(3)'));
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  const stale = await getJson(`${svc.baseUrl}/healthz`);
  t.is(stale.status, 200, 'liveness answers from the last check');
  t.true(stale.body.database.age_ms >= 1_000, `age ${stale.body.database.age_ms} ms`);
  t.true(stale.ms < 1_000, `answered in ${stale.ms.toFixed(0)} ms while the database was busy`);
  // A busy database is not a down one: liveness stays 200 while the refresh waits in the queue.
  const stillBusy = await getJson(`${svc.baseUrl}/healthz`);
  t.is(stillBusy.status, 200);
  const ready = await getJson(`${svc.baseUrl}/readyz`);
  t.is(ready.status, 200, 'readiness waits for its own check');
  t.is(ready.body.database.age_ms, 0);
  t.true(ready.ms >= 1_000, `readyz waited ${ready.ms.toFixed(0)} ms behind the sleeping queries`);
  await Promise.all(sleepers);
  const fresh = await getJson(`${svc.baseUrl}/healthz`);
  t.is(fresh.status, 200);
  t.true(fresh.body.database.age_ms < 1_500, `age ${fresh.body.database.age_ms} ms after the queue drained`);
});

test('/healthz turns 503 degraded once a check finds the database gone', async (t) => {
  const gone = await startTestServer();
  try {
    t.is((await getJson(`${gone.baseUrl}/healthz`)).status, 200);
    await gone.server.database.sequelize.close();
    const ready = await getJson(`${gone.baseUrl}/readyz`);
    t.is(ready.status, 503);
    t.is(ready.body.database.status, 'unreachable');
    const live = await getJson(`${gone.baseUrl}/healthz`);
    t.is(live.status, 503);
    t.is(live.body.status, 'degraded');
  } finally {
    await gone.close().catch(() => undefined);
  }
});

test('/v1/metrics carries the live heap after the latest full collection', async (t) => {
  const metrics = await svc.operator.system.metrics();
  t.regex(metrics, /^# TYPE svc_nodejs_heap_live_bytes gauge$/m);
  t.regex(metrics, /^svc_nodejs_heap_live_bytes \d+$/m);
});

// Serial: another test's scrape would start the histogram's next period.
test.serial("/v1/metrics carries the event loop's delay, sampled while requests arrive, once each", async (t) => {
  // Requests other than probes and scrapes start the sampling (event-loop-delay.ts); the first of
  // its 100 ms samples is taken at its second tick.
  await getJson(`${svc.baseUrl}/openapi.json`);
  await new Promise((resolve) => setTimeout(resolve, 400));
  const metrics = await svc.operator.system.metrics();
  for (const name of ['seconds', 'min_seconds', 'max_seconds', 'mean_seconds', 'stddev_seconds', 'p50_seconds', 'p90_seconds', 'p99_seconds']) {
    t.is(metrics.match(new RegExp(`^# TYPE svc_nodejs_eventloop_lag_${name} gauge$`, 'gm'))?.length, 1, name);
    t.regex(metrics, new RegExp(`^svc_nodejs_eventloop_lag_${name} [0-9.e-]+$`, 'm'));
  }
  const p99 = Number(/^svc_nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(metrics)?.[1]);
  t.true(p99 > 0 && p99 < 10, `p99 ${p99} s: sampled, not the empty histogram's`);
});
