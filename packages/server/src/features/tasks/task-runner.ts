import type { Logger } from 'pino';
import { isServiceError } from '../../service-error.ts';
import { TaskEventBatch } from './task-event-batch.ts';
import type { TaskSignals } from './task-signals.ts';
import type { ClaimedTask, TaskEnd, TaskRow, TaskStore } from './task-store.ts';
import type { TasksConfig } from './tasks-config.ts';

/** What a kind's handler is given for one run of one task. */
export interface TaskRun {
  readonly task: TaskRow;
  /**
   * Aborted when the task must stop: a cancel asked on any replica (`reason` 'cancelled'), the
   * lease lost (`'lease_lost'`: another replica may run it now), or this server stopping (`'shutdown'`).
   */
  readonly signal: AbortSignal;
  /**
   * Appends the next numbered event; answers its number once it is stored (undefined once the
   * lease is lost). Events emitted while a write is in flight are written together in the next
   * (task-event-batch.ts): a handler need not await each one, and every event emitted before the
   * handler returns is stored before the task ends.
   */
  emit(type: string, data: unknown): Promise<number | undefined>;
}

/** Runs one task of a kind to its end. A throw ends it `failed` (a ServiceError's code, else `task_failed`). */
export type TaskHandler = (run: TaskRun) => Promise<TaskEnd>;

/**
 * This process's runners over the shared store: woken by a `new` signal (any replica's create)
 * and by the backstop, it claims queued tasks of the kinds registered here, up to
 * `SVC_TASKS_RUNNERS` at once, renews each lease at a third of its length, and stops a task when
 * its cancel is asked (woken by the `cancel` signal, or seen at the next renewal).
 */
export class TaskRunner {
  readonly #store: TaskStore;
  readonly #signals: TaskSignals;
  readonly #config: TasksConfig;
  readonly #log: Logger;
  readonly #handlers = new Map<string, TaskHandler>();
  readonly #running = new Map<string, { claimed: ClaimedTask; abort: AbortController; done: Promise<void> }>();
  #claiming: Promise<void> | undefined;
  #again = false;
  #closed = false;

  constructor(store: TaskStore, signals: TaskSignals, config: TasksConfig, log: Logger) {
    this.#store = store;
    this.#signals = signals;
    this.#config = config;
    this.#log = log;
  }

  /** Registers the handler of a kind; this process then claims tasks of it. */
  register(kind: string, handler: TaskHandler): void {
    if (this.#handlers.has(kind)) throw new Error(`a task handler for ${kind} is already registered`);
    this.#handlers.set(kind, handler);
    this.wake();
  }

  /** Claims what it can now; coalesces wakes that arrive while a claim round runs. */
  wake(): void {
    if (this.#closed || this.#config.runners === 0 || this.#handlers.size === 0) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = this.#claimRound()
      .catch((error: unknown) => this.#log.warn({ err: error }, 'task claim failed; the backstop tries again'))
      .finally(() => {
        this.#claiming = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  async #claimRound(): Promise<void> {
    while (!this.#closed && this.#running.size < this.#config.runners) {
      const claimed = await this.#store.claim([...this.#handlers.keys()]);
      if (!claimed) return;
      void this.#start(claimed);
    }
  }

  /** Runs a task this process created claimed (`TaskStore.createClaimed`) with its own handler; resolves once ended. */
  runClaimed(claimed: ClaimedTask, handler: TaskHandler): Promise<void> {
    return this.#start(claimed, handler, true);
  }

  #start(claimed: ClaimedTask, handler = this.#handlers.get(claimed.row.kind) as TaskHandler, local = false): Promise<void> {
    const abort = new AbortController();
    const entry = { claimed, abort, done: Promise.resolve() };
    this.#running.set(claimed.row.id, entry);
    entry.done = this.#run(claimed, abort, handler, local).finally(() => {
      this.#running.delete(claimed.row.id);
      this.wake();
    });
    return entry.done;
  }

  async #run(claimed: ClaimedTask, abort: AbortController, handler: TaskHandler, local: boolean): Promise<void> {
    const id = claimed.row.id;
    const renew = async () => {
      const { held, cancel } = await this.#store.renew(claimed).catch(() => ({ held: true, cancel: false }));
      if (!held) abort.abort('lease_lost');
      else if (cancel) abort.abort('cancelled');
    };
    const renewal = setInterval(() => void renew(), (this.#config.leaseSeconds * 1000) / 3);
    const offCancel = this.#signals.on(['cancel'], id, () => void renew());
    await this.#signals.announce('event', id).catch(() => {});
    const events = new TaskEventBatch(this.#store, this.#signals, claimed);
    let end: TaskEnd;
    try {
      // A cancel asked before the claim is seen at once.
      if (claimed.row.cancel_requested) abort.abort('cancelled');
      end = await handler({ task: claimed.row, signal: abort.signal, emit: (type, data) => events.add(type, data) });
      // Every event emitted is stored before the end: a reader that sees the end has every event.
      await events.drain();
      if (abort.signal.aborted && abort.signal.reason === 'cancelled' && end.status !== 'completed') end = { ...end, status: 'cancelled' } as TaskEnd;
    } catch (error) {
      await events.drain().catch(() => {});
      end = abort.signal.reason === 'cancelled' ? { status: 'cancelled' } : failure(error);
    } finally {
      clearInterval(renewal);
      offCancel();
    }
    if (abort.signal.reason === 'lease_lost') return;
    // A task run here with what only this process held cannot be taken up elsewhere: it ends.
    if (abort.signal.reason === 'shutdown' && local) end = { status: 'failed', code: 'task_runner_stopped', message: 'The server running the task stopped.' };
    else if (abort.signal.reason === 'shutdown') {
      await this.#store.release(claimed).catch(() => {});
      await this.#signals.announce('new', id).catch(() => {});
      return;
    }
    if (await this.#store.finish(claimed, end).catch(() => false)) await this.#signals.announce('end', id).catch(() => {});
  }

  /** Stops claiming, stops the tasks running here and gives them back to the queue (within `timeoutMs`). */
  async close(timeoutMs: number): Promise<void> {
    this.#closed = true;
    for (const entry of this.#running.values()) entry.abort.abort('shutdown');
    const all = Promise.all([...this.#running.values()].map((entry) => entry.done));
    await Promise.race([all, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
  }
}

function failure(error: unknown): TaskEnd {
  if (isServiceError(error)) return { status: 'failed', code: error.code, message: error.message };
  return { status: 'failed', code: 'task_failed', message: error instanceof Error ? error.message : String(error) };
}
