import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { startTestServer } from '@svc/testing/test-server';

/**
 * An idle server does not wake: no timer runs on a clock shorter than its slow backstops, so its
 * event loop turns a few times a second at most. Counted as libuv's loop iterations over a quiet
 * window (a count, never a time: other test files share the cores; the embedded database runs in
 * a process of its own, so its work is not counted here). Before issue 42's work the server woke
 * 13 to 15 times a second: the event loop's delay histogram every 100 ms, the cross-replica MCP
 * cancellation poll every 500 ms, the response-stall watch, Node's check of request deadlines and
 * the connection pool's reaper every second. On a loaded 2-core VM a wake costs 0.3 ms of CPU at
 * 10 a second and about 1 ms at one a second.
 */
const WINDOW_MS = 5_000;
/**
 * Loop iterations allowed in WINDOW_MS: the 10 s backstops (jobs, tasks) and their statements,
 * about 3 iterations each, this test's own sleep, and room for a prune falling in the window.
 */
const MAX_ITERATIONS = 25;

test('an idle server turns its event loop at most 25 times in 5 s', async (t) => {
  const svc = await startTestServer();
  t.teardown(() => svc.close());
  // Start-up's work (the first claims, caches warming, the test client's connection closing) is over before the window opens.
  await sleep(2_000);
  const from = performance.nodeTiming.uvMetricsInfo.loopCount;
  await sleep(WINDOW_MS);
  const iterations = performance.nodeTiming.uvMetricsInfo.loopCount - from;
  t.true(iterations <= MAX_ITERATIONS, `${iterations} event loop iterations in ${WINDOW_MS} ms of idling (at most ${MAX_ITERATIONS})`);
  t.log(`${iterations} event loop iterations in ${WINDOW_MS} ms`);
});
