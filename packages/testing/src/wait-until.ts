import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  /** How long to keep trying (default 5 s; generous, since a loaded machine is slow, and a pass returns early). */
  timeoutMs?: number;
  /** The pause between two checks (default 20 ms). */
  intervalMs?: number;
}

/**
 * Checks `condition` until it returns a truthy value and returns that value, so a poll can hand
 * back what it found (a job, a log line). Past the deadline it checks once more, then throws an
 * error naming what was awaited: `what` may be a function, evaluated then, to add the last state
 * seen.
 *
 * @example
 * const job = await waitUntil(`job ${id} finished`, async () => {
 *   const current = await client.jobs.get({ params: { job_id: id } });
 *   return current.status === 'succeeded' && current;
 * }, { timeoutMs: 30_000, intervalMs: 50 });
 */
export async function waitUntil<T>(
  what: string | (() => string),
  condition: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<Exclude<T, false | 0 | '' | null | undefined>> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const expired = performance.now() >= deadline;
    const value = await condition();
    if (value) return value as Exclude<T, false | 0 | '' | null | undefined>;
    if (expired) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
    // Near the deadline, one sleep that ends past it: timers run on a whole-millisecond clock, so
    // sleeping the fraction left woke early again and again (7 checks in a 100 ms wait in CI).
    const intervalMs = options.intervalMs ?? 20;
    const leftMs = deadline - performance.now();
    await sleep(leftMs < intervalMs ? Math.max(0, Math.ceil(leftMs)) + 1 : intervalMs);
  }
}
