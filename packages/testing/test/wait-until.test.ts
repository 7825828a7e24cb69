import test from 'ava';
import { waitUntil } from '@svc/testing/wait-until';

test('answers the first truthy value the condition returns, checking again after each interval', async (t) => {
  let calls = 0;
  const found = await waitUntil('the third call', async () => (++calls === 3 ? { call: calls } : undefined), { intervalMs: 5 });
  t.deepEqual(found, { call: 3 });
});

test('past the deadline it checks once more, then throws naming what was awaited and the state then', async (t) => {
  const checks: number[] = [];
  const started = performance.now();
  const error = await t.throwsAsync(
    waitUntil(
      () => `a condition that never holds (after ${checks.length} checks)`,
      () => (checks.push(performance.now() - started), false),
      { timeoutMs: 100, intervalMs: 30 },
    ),
  );
  t.regex(error!.message, /^timed out after 100 ms waiting for a condition that never holds \(after \d+ checks\)$/);
  t.true(checks.at(-1)! >= 100, `the last check ${Math.round(checks.at(-1)!)} ms after the start, at or past the deadline`);
  // One check per interval, plus those at the deadline's edge (timers round by a millisecond); a loaded machine makes fewer.
  t.true(checks.length >= 2 && checks.length <= 6, `${checks.length} checks`);
});

test('a condition that holds at the deadline still counts', async (t) => {
  const started = performance.now();
  t.true(await waitUntil('the deadline', () => performance.now() - started >= 50, { timeoutMs: 50, intervalMs: 200 }));
});
