import type { Transaction } from 'sequelize';
import { firstBackstopDelayMs } from '../../db/backstop.ts';
import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import { TaskRunner, type TaskHandler } from './task-runner.ts';
import { TaskSignals } from './task-signals.ts';
import { ENDED, TaskStore, type TaskEvent, type TaskRow } from './task-store.ts';

export type { TaskHandler, TaskRun } from './task-runner.ts';
export type { TaskEnd, TaskEvent, TaskRow, TaskStatus } from './task-store.ts';
export { ENDED } from './task-store.ts';

/**
 * The durable task store, as other features use it (docs/tasks.md): every long operation an agent
 * can start is a task, created by one replica, run by any, read and cancelled from any.
 */
export interface Tasks {
  /**
   * A queued task owned by `owner` (a principal key); any replica's runner of `kind` takes it up.
   * Given a `transaction`, the task is stored with it, and announced to every replica's runners
   * once it commits (rolled back, it never existed).
   */
  create(task: { id?: string; owner: string; kind: string; input: unknown; maxAttempts?: number }, transaction?: Transaction): Promise<TaskRow>;
  /**
   * `create` under a per-owner cap on the tasks of `kind` not ended (counted on every replica,
   * exactly): undefined, and nothing stored, when the owner has `cap.active` of them.
   */
  createWithin(cap: { active: number }, task: { id?: string; owner: string; kind: string; input: unknown; maxAttempts?: number }): Promise<TaskRow | undefined>;
  /** The owner's tasks of `kind`, newest first, after the task `afterId`; undefined when that task is not the owner's (any more). */
  list(owner: string, kind: string, limit: number, afterId?: string): Promise<TaskRow[] | undefined>;
  /** The task's events numbered after `after` (at most `limit`), for its owner; undefined for anyone else. */
  events(id: string, owner: string, after: number, limit?: number): Promise<TaskEvent[] | undefined>;
  /** The task for its owner; undefined for anyone else or once expired. */
  get(id: string, owner: string): Promise<TaskRow | undefined>;
  /** Asks the task to stop (from any replica); the task as it is now, undefined when not the owner's. */
  cancel(id: string, owner: string): Promise<TaskRow | undefined>;
  /**
   * The task's events numbered after `after`, as they are appended (on any replica), until the
   * task has ended and every event is read, or `signal` aborts. Undefined when not the owner's.
   */
  follow(id: string, owner: string, after: number, signal?: AbortSignal): Promise<AsyncGenerator<TaskEvent> | undefined>;
  /**
   * Creates a task already claimed by this process and runs `handler` on it here (the work needs
   * what only this process holds, such as the request it answers); answers the row at once.
   * Every other replica reads, follows and cancels it as any task; if this process dies, the
   * lease runs out and the task is failed (`task_runner_lost`) after `maxAttempts` (default 1).
   * `ended` settles when the run here is over (the request that started it holds its key limits
   * until then).
   */
  runHere(
    task: { id?: string; owner: string; kind: string; input: unknown; maxAttempts?: number },
    handler: TaskHandler,
  ): Promise<{ row: TaskRow; ended: Promise<void> }>;
  /**
   * `runHere` under a per-owner cap on the tasks of `kind` (counted on every replica, exactly):
   * undefined, and nothing stored or run, when the owner has `cap.running` of them not ended; the
   * owner's ended ones beyond the newest `cap.kept` are deleted as this one is stored.
   */
  runHereWithin(
    cap: { running: number; kept: number },
    task: { id?: string; owner: string; kind: string; input: unknown; maxAttempts?: number },
    handler: TaskHandler,
  ): Promise<{ row: TaskRow; ended: Promise<void> } | undefined>;
  /**
   * Calls `listener` for each task of `kind` that this replica's backstop ended because its runner
   * died (`failed` with `task_runner_lost`, or `cancelled` when a cancel was asked): exactly one
   * replica is told of each, so an announcement of that end (a webhook) is made once. The listener
   * runs in the transaction that ends the task (`transaction`): what it writes is stored with the
   * end, or neither is (the task is reaped again at the next backstop).
   */
  onReaped(kind: string, listener: (task: TaskRow, transaction: Transaction) => Promise<void>): void;
  /** Runs tasks of `kind` in this process too. */
  register: TaskRunner['register'];
  /**
   * Watches the task for a change (an event, a cancel, its end): `wait` resolves on the next one
   * (or one since the last wait, so a change between a read and the wait is never missed), or
   * after the backstop. `close` it when done.
   */
  watch(id: string): { wait(signal?: AbortSignal): Promise<void>; close(): void };
}

/** What a reader of a task waits for. */
const CHANGES = ['event', 'cancel', 'end'] as const;

export function createTasksFeature(deps: Pick<ServerDeps, 'config' | 'database' | 'log' | 'scheduler'>) {
  const config = deps.config.tasks;
  const store = new TaskStore(deps.database.sequelize, config);
  const signals = new TaskSignals({
    sequelize: deps.database.sequelize,
    url: deps.config.databaseUrl,
    kind: deps.database.kind,
    onError: (error) => deps.log.warn({ err: error }, 'task notifications lost; the backstop covers until they are back'),
  });
  const runner = new TaskRunner(store, signals, config, deps.log);
  const reapListeners = new Map<string, (task: TaskRow, transaction: Transaction) => Promise<void>>();
  const started = signals.start();
  signals.on(['new'], undefined, () => runner.wake());
  // The backstop (db/backstop.ts): a dead runner's lease is reaped, and what no notification
  // announced is claimed. One read says whether there is either; idle, it is all the store sends.
  const backstop = async () => {
    const found = await store.backstopFinds();
    if (!found.expired && !found.queued) return;
    const { ended, requeued } = found.expired
      ? await store.reapExpiredLeases(async (ended, transaction) => {
          for (const task of ended) await reapListeners.get(task.kind)?.(task, transaction);
        })
      : { ended: [], requeued: false };
    if (found.queued || requeued) runner.wake();
    for (const task of ended) await signals.announce('end', task.id).catch(() => {});
  };
  deps.scheduler.every('tasks.backstop', config.backstopMs, backstop);
  // On the embedded database the leases the previous process left have all run out one lease
  // after this start: they are taken up then rather than at the first of the long backstop's turns.
  if (deps.database.kind === 'embedded') deps.scheduler.once('tasks.first-backstop', firstBackstopDelayMs(config.leaseSeconds), backstop);
  deps.scheduler.every('tasks.prune', Math.max(config.backstopMs, 60_000), () => store.prune());

  const watch = (id: string) => signals.watch(CHANGES, id, config.backstopMs);
  const tasks: Tasks = {
    async create(task, transaction) {
      await started;
      const row = await store.create(task, transaction);
      if (transaction) transaction.afterCommit(() => signals.announce('new', row.id).catch(() => {}));
      else await signals.announce('new', row.id);
      return row;
    },
    get: (id, owner) => store.get(id, owner),
    async createWithin(cap, task) {
      await started;
      const row = await store.createWithin(cap, task);
      if (row) await signals.announce('new', row.id);
      return row;
    },
    list: (owner, kind, limit, afterId) => store.list(owner, kind, limit, afterId),
    async events(id, owner, after, limit) {
      if (!(await store.get(id, owner))) return undefined;
      return store.events(id, after, limit);
    },
    async cancel(id, owner) {
      const row = await store.cancel(id, owner);
      if (row) await signals.announce(row.status === 'cancelled' ? 'end' : 'cancel', id);
      return row;
    },
    async follow(id, owner, after, signal) {
      if (!(await store.get(id, owner))) return undefined;
      return (async function* () {
        // Watching before the first read: a change between a read and the wait is never missed.
        const watch = signals.watch(CHANGES, id, config.backstopMs);
        try {
          let last = after;
          while (!signal?.aborted) {
            // Read the status before the events: an end seen here means every event is already stored.
            const row = await store.get(id, owner);
            const events = await store.events(id, last);
            for (const event of events) {
              last = event.seq;
              yield event;
            }
            if (!row || (ENDED.includes(row.status) && last >= row.event_count)) return;
            if (events.length === 0) await watch.wait(signal);
          }
        } finally {
          watch.close();
        }
      })();
    },
    async runHere(task, handler) {
      await started;
      const claimed = await store.createClaimed({ maxAttempts: 1, ...task });
      const ended = runner.runClaimed(claimed, handler);
      return { row: claimed.row, ended };
    },
    async runHereWithin(cap, task, handler) {
      await started;
      const claimed = await store.createClaimedWithin(cap, { maxAttempts: 1, ...task });
      if (!claimed) return undefined;
      return { row: claimed.row, ended: runner.runClaimed(claimed, handler) };
    },
    onReaped: (kind, listener) => void reapListeners.set(kind, listener),
    register: (kind, handler) => runner.register(kind, handler),
    watch,
  };
  return {
    handlers: {},
    tasks,
    close: async () => {
      await runner.close(Math.max(0, deps.config.shutdownTimeoutMs / 2));
      await signals.close();
    },
  } satisfies Feature<never>;
}
