import { UsageError } from './failure.ts';

/**
 * The most seconds `--idle-timeout` takes: Node's timers hold at most 2^31 - 1 ms, and a longer
 * delay fires at once (a "timeout" that would fail every download on its first quiet moment).
 */
export const MAX_IDLE_TIMEOUT_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/**
 * `--idle-timeout <seconds>` (or SVC_IDLE_TIMEOUT) as the client's `streamIdleTimeout` in ms:
 * undefined when neither is given (the client's default, 60 s), 0 to turn it off. Anything else
 * is the user's typo, a usage error (exit 2) that names the flag and what it takes.
 */
export function idleTimeoutMs(seconds: string | undefined): number | undefined {
  if (seconds === undefined) return undefined;
  const value = Number(seconds);
  if (seconds.trim() === '' || !Number.isFinite(value) || value < 0 || value > MAX_IDLE_TIMEOUT_SECONDS)
    throw new UsageError(
      `--idle-timeout (or SVC_IDLE_TIMEOUT) takes a number of seconds from 0 to ${MAX_IDLE_TIMEOUT_SECONDS} (0 turns it off), not ${JSON.stringify(seconds)}`,
    );
  return Math.round(value * 1000);
}
