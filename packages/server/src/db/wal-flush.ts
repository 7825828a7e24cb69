import type { Sequelize } from 'sequelize';
import { prepared, queryPrepared } from './prepared.ts';

/**
 * Makes every transaction whose COMMIT returned before this call durable (whatever session ran
 * it), by committing one tiny synchronous write of its own. Pair it with a transaction committed under
 * `synchronous_commit = off` (see `asyncCommitSql`) to release that transaction's row locks
 * without holding them through the WAL flush, and still answer only once its data is on disk.
 *
 * Why this is enough (PostgreSQL manual, "Reliability and the Write-Ahead Log"):
 * - An asynchronous commit returns once its commit record is inserted into the WAL, before the
 *   flush; crash recovery replays the WAL "up to the last record that was flushed", so a commit
 *   survives exactly when the WAL is flushed past its commit record.
 * - WAL positions (LSNs) are byte offsets that increase with each new record. This statement
 *   starts after the earlier COMMIT has returned, so its own commit record lies after that
 *   commit record, and a synchronous commit waits until the WAL is flushed through its own
 *   commit record: hence through the earlier one too.
 * - It runs with the session's own `synchronous_commit` (`on` by default; `remote_write` or
 *   `remote_apply` with synchronous standbys), so an earlier put gets the same guarantee it had
 *   when it committed synchronously itself. Standbys receive the WAL in the same order.
 * Concurrent callers share flushes (group commit): one fsync covers every commit before it.
 *
 * The write has to produce WAL (a temporary or unlogged table, or a read-only statement,
 * commits without waiting for any flush), so it updates a real row; that row belongs to this
 * backend (its pid), so no caller ever waits for another's row lock. Rows of backends long gone
 * are dropped by `pruneWalFlushRows`.
 */
export async function flushWal(sequelize: Sequelize): Promise<void> {
  await queryPrepared(sequelize, flushStatement, []);
}

const flushStatement = prepared(
  `INSERT INTO svc_wal_flush (backend_pid) VALUES (pg_backend_pid())
   ON CONFLICT (backend_pid) DO UPDATE SET flushes = svc_wal_flush.flushes + 1, flushed_at = now()`,
);

/**
 * SQL (a `set_config` call to place in a statement of the transaction) that makes the
 * surrounding transaction commit asynchronously: its COMMIT neither waits for the WAL flush nor
 * holds its row locks through it. Only safe when `flushWal` runs before anyone is told of the commit.
 */
export const asyncCommitSql = `set_config('synchronous_commit', 'off', true)`;

/** Drops rows of backends that have not flushed for a day (their pids are long gone or idle). */
export async function pruneWalFlushRows(sequelize: Sequelize): Promise<void> {
  await sequelize.query(`DELETE FROM svc_wal_flush WHERE flushed_at < now() - interval '1 day'`);
}

/**
 * Shares `flushWal` statements between concurrent callers of one process: a caller waits for a
 * flush that starts after it asks (so after its own commit returned, which is what makes the
 * flush cover it), and every caller that asks while one flush runs shares the next one. Under
 * load this sends one flush statement for many puts instead of one each.
 */
export class WalFlusher {
  private readonly sequelize: Sequelize;
  private current: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(sequelize: Sequelize) {
    this.sequelize = sequelize;
  }

  flush(): Promise<void> {
    if (!this.current) return this.start();
    // The running flush may have begun before the caller's commit: wait for the one after it.
    this.next ??= this.current.then(
      () => this.startNext(),
      () => this.startNext(),
    );
    return this.next;
  }

  private startNext(): Promise<void> {
    this.next = undefined;
    return this.current ?? this.start();
  }

  private start(): Promise<void> {
    const flight: Promise<void> = flushWal(this.sequelize).finally(() => {
      if (this.current === flight) this.current = undefined;
    });
    this.current = flight;
    return flight;
  }
}
