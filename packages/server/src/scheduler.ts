import type { Logger } from 'pino';

/** A housekeeping task (a prune, a sweep): a failure is logged and the task runs again at its next turn. */
export type ScheduledTask = () => Promise<unknown>;

/**
 * The server's one clock for housekeeping. Every replica runs the same tasks, so a task must be
 * safe to run anywhere at any time (a prune, a sweep of expired holds); the shared state is in
 * the database. The timers are unref'd (housekeeping never keeps a process alive), a task that is
 * still running when its next turn comes skips that turn rather than overlapping itself, and
 * `close` stops the timers and waits for the tasks running now, so the database they use is
 * closed after them.
 *
 * @example
 * scheduler.every('jobs.prune', 60_000, () => store.pruneFinished());
 */
export class Scheduler {
  readonly #log: Logger;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #running = new Set<Promise<void>>();
  #closed = false;

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Runs `task` every `intervalMs` from now until `close`; `name` labels its failures in the log. */
  every(name: string, intervalMs: number, task: ScheduledTask): void {
    if (this.#closed) throw new Error(`the scheduler is closed; "${name}" was not scheduled`);
    let turn: Promise<void> | undefined;
    const timer = setInterval(() => {
      if (turn || this.#closed) return;
      const current = this.#run(name, task).finally(() => {
        this.#running.delete(current);
        turn = undefined;
      });
      turn = current;
      this.#running.add(current);
    }, intervalMs);
    timer.unref();
    this.#timers.add(timer);
  }

  /** Runs `task` once, `afterMs` from now, unless `close` came first. */
  once(name: string, afterMs: number, task: ScheduledTask): void {
    if (this.#closed) throw new Error(`the scheduler is closed; "${name}" was not scheduled`);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (this.#closed) return;
      const current = this.#run(name, task).finally(() => this.#running.delete(current));
      this.#running.add(current);
    }, afterMs);
    timer.unref();
    this.#timers.add(timer);
  }

  /** Stops every timer, then waits for the tasks running now. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    // clearInterval clears a setTimeout's timer too (one kind of timer in Node).
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers.clear();
    await Promise.all(this.#running);
  }

  async #run(name: string, task: ScheduledTask): Promise<void> {
    try {
      await task();
    } catch (error) {
      this.#log.warn({ err: error, task: name }, `scheduled task ${name} failed; it runs again at its next turn`);
    }
  }
}
