import type { TaskSignals } from './task-signals.ts';
import type { ClaimedTask, TaskStore } from './task-store.ts';

/** Events one statement appends at most: a bounded statement, whatever a handler emits at once. */
export const MAX_EVENT_BATCH = 256;

interface Pending {
  type: string;
  data: unknown;
  resolve: (seq: number | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * The events of one run, written as a group commit: the first event is written at once, and the
 * events emitted while a write is in flight wait for it and go in the next write together (one
 * statement, one NOTIFY), so a handler that emits faster than the database answers pays one round
 * trip per batch rather than per event, and one that emits slowly adds no wait at all. Numbers
 * stay consecutive and in emit order: one write at a time, each taking the next `seq`s in one
 * statement, so `starting_after=N` on any replica still reads every event once. Each `add`
 * answers when its event is stored (its number; undefined once the lease is lost).
 */
export class TaskEventBatch {
  readonly #store: TaskStore;
  readonly #signals: TaskSignals;
  readonly #claimed: ClaimedTask;
  #buffer: Pending[] = [];
  #writing: Promise<void> | undefined;
  #failure: unknown;

  constructor(store: TaskStore, signals: TaskSignals, claimed: ClaimedTask) {
    this.#store = store;
    this.#signals = signals;
    this.#claimed = claimed;
  }

  add(type: string, data: unknown): Promise<number | undefined> {
    const stored = new Promise<number | undefined>((resolve, reject) => this.#buffer.push({ type, data, resolve, reject }));
    // A handler that does not await each event is still told of a failed write by `drain`.
    stored.catch(() => {});
    this.#kick();
    return stored;
  }

  /** Writes what is buffered and waits for it; throws the first write's failure, if any. */
  async drain(): Promise<void> {
    while (this.#writing) await this.#writing;
    if (this.#failure !== undefined) throw this.#failure;
  }

  #kick(): void {
    if (this.#writing || this.#buffer.length === 0) return;
    this.#writing = this.#write().finally(() => {
      this.#writing = undefined;
      this.#kick();
    });
  }

  async #write(): Promise<void> {
    const batch = this.#buffer.splice(0, MAX_EVENT_BATCH);
    try {
      const first = await this.#store.appendMany(
        this.#claimed,
        batch.map(({ type, data }) => ({ type, data })),
      );
      batch.forEach((event, index) => event.resolve(first === undefined ? undefined : first + index));
      if (first !== undefined) await this.#signals.announce('event', this.#claimed.row.id).catch(() => {});
    } catch (error) {
      this.#failure ??= error;
      for (const event of batch) event.reject(error);
    }
  }
}
