import { EventEmitter } from 'node:events';
import type { Sequelize } from 'sequelize';
import { ChannelListener } from '../../db/notifications.ts';

/** What happened to a task: `new` (created or queued again), `event` (appended), `cancel` (asked), `end` (ended). */
export type TaskSignal = 'new' | 'event' | 'cancel' | 'end';

const CHANNEL = 'svc_tasks';

/**
 * Wakes whoever waits on a task, on every replica: on PostgreSQL each announcement is a
 * `pg_notify` heard by every replica's listening connection (`ChannelListener`); on the embedded
 * database (one process) it is an in-process event. Nothing relies on a wake alone: every waiter
 * also looks on its own after the store's backstop (`SVC_TASKS_BACKSTOP_MS`), which covers a
 * notification lost while the listening connection was down, and a runner that died.
 */
export class TaskSignals {
  readonly #sequelize: Sequelize;
  readonly #local = new EventEmitter().setMaxListeners(0);
  readonly #listener: ChannelListener | undefined;

  constructor(options: { sequelize: Sequelize; url: string | undefined; kind: 'embedded' | 'postgres'; onError: (error: unknown) => void }) {
    this.#sequelize = options.sequelize;
    this.#listener =
      options.kind === 'postgres' && options.url
        ? new ChannelListener({
            url: options.url,
            channel: CHANNEL,
            onNotify: (payload) => this.#emit(payload),
            // What was missed while not listening is unknown: wake every waiter to look again.
            onReset: () => this.#local.emit('*'),
            onError: options.onError,
          })
        : undefined;
  }

  async start(): Promise<void> {
    await this.#listener?.start();
  }

  async close(): Promise<void> {
    await this.#listener?.close();
  }

  /** Tells every replica (this one at once). Call it after the change is committed. */
  async announce(signal: TaskSignal, id: string): Promise<void> {
    const payload = `${signal}:${id}`;
    this.#emit(payload);
    if (this.#listener) await this.#sequelize.query('SELECT pg_notify(:channel, :payload)', { replacements: { channel: CHANNEL, payload } });
  }

  /** Calls `listener` on each of these signals (`id` undefined: any task); answers the unsubscribe. */
  on(signals: readonly TaskSignal[], id: string | undefined, listener: () => void): () => void {
    const names = [...signals.map((signal) => (id === undefined ? signal : `${signal}:${id}`)), '*'];
    for (const name of names) this.#local.on(name, listener);
    return () => {
      for (const name of names) this.#local.off(name, listener);
    };
  }

  /**
   * Watches task `id` from now on: `wait` resolves at once if a signal came since the last wait
   * (so a change between a read and the wait is never missed), else on the next, after `ms`, or
   * when `abort` fires. `close` when done.
   */
  watch(signals: readonly TaskSignal[], id: string, ms: number): { wait(abort?: AbortSignal): Promise<void>; close(): void } {
    let pending = false;
    let wake: (() => void) | undefined;
    const off = this.on(signals, id, () => {
      pending = true;
      wake?.();
    });
    return {
      wait: (abort) =>
        new Promise<void>((resolve) => {
          if (pending || abort?.aborted) {
            pending = false;
            return resolve();
          }
          const done = () => {
            clearTimeout(timer);
            abort?.removeEventListener('abort', done);
            wake = undefined;
            pending = false;
            resolve();
          };
          const timer = setTimeout(done, ms);
          wake = done;
          abort?.addEventListener('abort', done, { once: true });
        }),
      close: off,
    };
  }

  #emit(payload: string): void {
    const colon = payload.indexOf(':');
    if (colon < 0) return;
    this.#local.emit(payload);
    this.#local.emit(payload.slice(0, colon));
  }
}
