import type { Sequelize } from 'sequelize';
import { windowStart } from '../../db/rate-counters.ts';
import { prepared, queryPrepared } from '../../db/prepared.ts';
import { BOARD_POSTS_CHANNEL, wakePayload } from './watch-wake.ts';
import { asyncCommitSql, type WalFlusher } from '../../db/wal-flush.ts';
import type { PutWindows } from './admission.ts';
import type { ItemRow } from './item-row.ts';
import type { BlackboardConfig } from './blackboard-config.ts';

/** One put as `svc_blackboard_put_batch` takes it: the item's columns and its admission windows. */
export interface BatchedPut {
  id: string;
  key: string;
  task: string | null;
  kind: string | null;
  topics: string[];
  parent_id: string | null;
  artifact_id: string | null;
  revision: string | null;
  runtime_versions: unknown;
  text: string;
  item: unknown;
  value_bytes: number;
  key_id: string;
  idempotency_key: string | null;
  request_hash: string;
  edit_token_hash: string;
  ttl_seconds: number;
  windows: PutWindows['sql'];
}

/** What became of one put of a batch (see the migration 20261121T1500-blackboard-put-batch). */
export type BatchOutcome = { inserted: ItemRow } | { refused: Array<{ bucket: string; hits: number; amount: number }> } | { race: true };

interface Waiting {
  put: BatchedPut;
  resolve(outcome: BatchOutcome): void;
  reject(error: unknown): void;
}

const batchStatement = (commitAsync: boolean) =>
  // The NOTIFY goes in the same statement, so it costs no round trip and is heard only if the
  // batch commits (watch streams of every replica then read their channel; see watch-wake.ts).
  prepared(
    `SELECT svc_blackboard_put_batch($1::jsonb, $2::timestamptz, $3::bigint) AS results, pg_notify('${BOARD_POSTS_CHANNEL}', $4::text) AS notified${commitAsync ? `, ${asyncCommitSql} AS commit_mode` : ''}`,
  );
const syncBatch = batchStatement(false);
const asyncBatch = batchStatement(true);

/**
 * Sends this replica's puts to the database in batches: while one batch statement runs, puts
 * that arrive wait, and go together in the next one (a lone put goes at once, alone). Every put
 * still gets its own admission decision, created_at and answer; see the migration for why this
 * is so much cheaper under concurrency than one statement per put.
 *
 * Durability: on PostgreSQL a batch commits asynchronously when other puts are under way (so the
 * next batch can run while this one's WAL flush is under way), and its puts are answered only
 * after `WalFlusher` has flushed past the commit; a put with no other under way commits
 * synchronously, one round trip instead of two. Without a flusher (the embedded database, which
 * runs with fsync off) every batch commits synchronously.
 */
export class PutBatcher {
  private readonly sequelize: Sequelize;
  private readonly settings: BlackboardConfig;
  private readonly walFlusher: WalFlusher | undefined;
  private waiting: Waiting[] = [];
  private running = false;
  /** Puts submitted and not yet answered (waiting, in a batch, or waiting for their flush). */
  private underWay = 0;

  /** Told the channel keys of each batch once it is durable (this replica's watch streams wake at once). */
  private readonly onStored: (keys: string[]) => void;

  constructor(sequelize: Sequelize, settings: BlackboardConfig, walFlusher: WalFlusher | undefined, onStored: (keys: string[]) => void = () => {}) {
    this.sequelize = sequelize;
    this.settings = settings;
    this.walFlusher = walFlusher;
    this.onStored = onStored;
  }

  submit(put: BatchedPut): Promise<BatchOutcome> {
    this.underWay += 1;
    const outcome = new Promise<BatchOutcome>((resolve, reject) => this.waiting.push({ put, resolve, reject }));
    if (!this.running) void this.drain();
    return outcome.finally(() => (this.underWay -= 1));
  }

  /** Runs batches until nobody waits; one batch statement at a time per replica. */
  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting;
        this.waiting = [];
        await this.run(batch);
      }
    } finally {
      this.running = false;
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    const commitAsync = this.walFlusher !== undefined && this.underWay > 1;
    let outcomes: BatchOutcome[];
    try {
      const [row] = await queryPrepared<{ results: BatchOutcome[] }>(this.sequelize, commitAsync ? asyncBatch : syncBatch, [
        JSON.stringify(batch.map((waiting) => waiting.put)),
        windowStart(new Date(), this.settings.windowSeconds),
        this.settings.retentionRows,
        wakePayload(batch.map((waiting) => waiting.put.key)),
      ]);
      outcomes = row!.results;
    } catch (error) {
      // The statement rolled back whole. One put the database refuses must not fail the others
      // beside it: put by put, each meets its own fate (ids are unique, so nothing can be stored twice).
      if (batch.length > 1) {
        for (const waiting of batch) await this.run([waiting]);
        return;
      }
      batch[0]!.reject(error);
      return;
    }
    // Durable before anyone is told; the next batch need not wait for this flush. Should the
    // flush fail, the puts may still be stored (as when a COMMIT's answer is lost); a retry
    // with the same idempotency key then answers the stored item.
    const durable = commitAsync ? this.walFlusher!.flush() : Promise.resolve();
    durable.then(
      () => {
        batch.forEach((waiting, index) => waiting.resolve(outcomes[index]!));
        const stored = batch.filter((_, index) => 'inserted' in outcomes[index]!).map((waiting) => waiting.put.key);
        if (stored.length > 0) this.onStored(stored);
      },
      (error: unknown) => batch.forEach((waiting) => waiting.reject(error)),
    );
  }
}
