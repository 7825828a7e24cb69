import type { Sequelize } from 'sequelize';
import { ChannelListener } from './notifications.ts';

/** How often a waiter looks anyway while its channel is not heard (the listening connection is down). */
const UNHEARD_POLL_MS = 1_000;

/** Why a waiter was woken: work was announced (or it started), or only its backstop came. */
export type WakeReason = 'announced' | 'backstop';

export interface WakeOptions {
  /** The PostgreSQL channel (`svc_<feature>`); a plain lower-case identifier. */
  readonly channel: string;
  /** The database the work is in: its kind says whether other replicas can exist. */
  readonly database: { readonly kind: 'embedded' | 'postgres'; readonly sequelize: Sequelize };
  /** PostgreSQL's URL, for the listening connection; without it (embedded) only this process wakes the waiter. */
  readonly url: string | undefined;
  /**
   * The slow poll kept as a backstop: what no notification announces (a lease that ran out on a
   * replica that died) is found within this long. Idle, it is the waiter's only database work.
   */
  readonly backstopMs: number;
  /**
   * The first backstop after `start`, sooner than `backstopMs` and not pushed back by wakes: on
   * the embedded database the process before this one left its leases behind when it died, and
   * they have all run out one lease after this start.
   */
  readonly firstBackstopMs?: number;
  /**
   * Looks for work; called on each wake. `backstop` says nothing announced work (the slow poll, or
   * the listening connection is down): the waiter may look with a cheap read before it claims. A
   * second wake while it runs is the waiter's to coalesce.
   */
  readonly onWake: (reason: WakeReason) => void;
  readonly onError: (error: unknown) => void;
}

/**
 * Wakes a worker when there is work for it instead of polling the database: the one way a
 * background waiter in svc learns of new work. On PostgreSQL it LISTENs on its channel (a
 * connection of its own, `ChannelListener`) and `announce` sends `pg_notify`, so a submission on
 * any replica wakes every replica's waiter within milliseconds; on the embedded database (one
 * replica, this process) `announce` wakes the waiter in process. A slow backstop poll
 * (`backstopMs`) finds what nobody announced, and while the listening connection is lost the
 * waiter polls every second until it is heard again (a notification sent meanwhile is missed, so
 * every reconnect wakes it once).
 *
 * New pollers (the durable task store being written now, any queue or sweep that waits for rows
 * another request writes) must use this rather than a `setInterval` over the database: an idle
 * server is held to < 1 database transaction a second (`idle.test.ts`).
 *
 * @example
 * const wake = new Wake({ channel: 'svc_jobs', database, url: config.databaseUrl, backstopMs: 10_000, onWake: () => workers.claim(), onError });
 * await wake.start();
 * // after the row is committed:
 * await wake.announce();
 */
export class Wake {
  readonly #options: WakeOptions;
  readonly #listener: ChannelListener | undefined;
  #timer: NodeJS.Timeout | undefined;
  #firstBackstop: NodeJS.Timeout | undefined;
  #started = false;
  #closed = false;

  constructor(options: WakeOptions) {
    this.#options = options;
    this.#listener =
      options.database.kind === 'postgres' && options.url
        ? new ChannelListener({
            url: options.url,
            channel: options.channel,
            onNotify: () => this.#wake('announced'),
            // What was announced while nobody listened is unknown: look as if it was.
            onReset: () => this.#wake('announced'),
            onError: options.onError,
          })
        : undefined;
  }

  /** Listens (PostgreSQL), wakes the waiter once, and starts the backstop. */
  async start(): Promise<void> {
    if (this.#started || this.#closed) return;
    this.#started = true;
    await this.#listener?.start();
    this.#wake('announced');
    const { firstBackstopMs } = this.#options;
    if (firstBackstopMs !== undefined && firstBackstopMs < this.#options.backstopMs && !this.#closed)
      this.#firstBackstop = setTimeout(() => this.#wake('backstop'), firstBackstopMs).unref();
  }

  /**
   * Tells every replica's waiter that there is work (this one's at once). Call it after the work's
   * row is committed: a waiter woken before the commit would not see it. Answers once sent.
   */
  async announce(): Promise<void> {
    this.#wake('announced');
    if (!this.#listener || this.#closed) return;
    await this.#options.database.sequelize.query("SELECT pg_notify(:channel, '')", { replacements: { channel: this.#options.channel } });
  }

  /** Wakes only this process's waiter (work it made itself, such as a slot it freed). */
  wakeHere(): void {
    this.#wake('announced');
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#firstBackstop);
    await this.#listener?.close();
  }

  #wake(reason: WakeReason): void {
    if (this.#closed || !this.#started) return;
    // Each wake pushes the backstop back: it only runs after a quiet backstopMs.
    this.#arm();
    try {
      this.#options.onWake(reason);
    } catch (error) {
      this.#options.onError(error);
    }
  }

  #arm(): void {
    clearTimeout(this.#timer);
    if (this.#closed) return;
    const heard = !this.#listener || this.#listener.listening;
    const delay = heard ? this.#options.backstopMs : Math.min(this.#options.backstopMs, UNHEARD_POLL_MS);
    this.#timer = setTimeout(() => this.#wake('backstop'), delay).unref();
  }
}
