/** The first wait after the workers' module failed to load, doubling with each failure in a row up to the most. */
const FIRST_WAIT_MS = 1_000;
const MOST_WAIT_MS = 30_000;

/**
 * When the parser pool may try to start its workers again after their module failed to load (a
 * missing file, a dependency that throws at import). Restarting at once spins: each thread loads,
 * fails and is replaced in a few hundred milliseconds, for as long as requests keep coming. The
 * wait doubles from 1 s to at most 30 s (the spec's worker start deadline), and each is drawn
 * between half and all of that ("equal jitter"), so replicas that failed together do not retry
 * together. A worker that loads resets it. A few lines, so no retry library: the pool needs the
 * delay itself, to refuse requests with it as `Retry-After`, not a retried function.
 */
export class StartBackoff {
  private failures = 0;
  private retryAt = 0;

  /** Counts a failed start; answers how long to wait before the next one, in milliseconds. */
  failed(): number {
    this.failures += 1;
    const ceiling = Math.min(MOST_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.min(this.failures - 1, 30));
    const wait = ceiling / 2 + Math.random() * (ceiling / 2);
    this.retryAt = performance.now() + wait;
    return wait;
  }

  /** A worker loaded: the next failure waits the first wait again. */
  succeeded(): void {
    this.failures = 0;
    this.retryAt = 0;
  }

  /** Milliseconds left before a start may be tried (0: now). */
  remainingMs(): number {
    return Math.max(0, this.retryAt - performance.now());
  }
}
