import { QueryTypes, type Sequelize } from 'sequelize';
import { prepared, queryPrepared } from '../../db/prepared.ts';
import type { ResponseCacheConfig } from './response-cache-config.ts';

/** How many of the oldest entries a write looks at to evict: bounded work per write, and more than the one entry it adds, so a lowered cap is caught up with. */
const EVICT_WINDOW = 32;
/** How many expired entries one housekeeping turn deletes at most. */
const SWEEP_BATCH = 1_000;

/**
 * Where an entry stands, as the database saw it: its version (`entry_seq` as text), its place in
 * the running totals, its expiry (epoch ms, rounded down), and the running totals then.
 */
export interface EntryStanding {
  version: string;
  entrySeq: number;
  bytesEnd: number;
  bytes: number;
  expiresAtMs: number;
  entriesWritten: number;
  bytesWritten: number;
}

export interface StoredEntry {
  key: string;
  principal: string;
  operation: string;
  model: string;
  body: string;
  bytes: number;
}

/**
 * "Still served" as SQL over the one totals row `t`, with the caps as the given parameters:
 * an entry is live while it is one of the last `max_entries` written, the bytes written from its
 * start on are at most `max_bytes`, and its TTL has not passed. So the live entries are at most
 * the caps, whole. Reads and the report use it, so an entry past a cap is never served or
 * counted, even before a write or the sweep deletes it.
 */
const live = (maxEntries: string, maxBytes: string) =>
  `c.expires_at > now() AND c.entry_seq > t.entries_written - ${maxEntries} AND c.bytes_end - c.bytes >= t.bytes_written - ${maxBytes}`;
/** The opposite of `live` for the oldest rows, which eviction and the sweep delete. */
const evictable = (row: string, maxEntries: string, maxBytes: string) =>
  `(${row}.expires_at <= now() OR ${row}.entry_seq <= t.entries_written - ${maxEntries} OR ${row}.bytes_end - ${row}.bytes < t.bytes_written - ${maxBytes})`;

/**
 * The live entry under a key: where it stands (its version `entry_seq`, new at every write of the
 * key, its place against the caps, its expiry, and the running totals) and its body, unless the
 * version is `$4`, the one this process holds in memory (then the body is not read, detoasted or
 * sent: the row's standing is all the hit needs from the database).
 */
const READ_LIVE_ENTRY = prepared(
  `SELECT c.entry_seq, c.bytes_end, c.bytes, floor(extract(epoch FROM c.expires_at) * 1000)::float8 AS expires_ms,
     t.entries_written, t.bytes_written, CASE WHEN c.entry_seq = $4::bigint THEN NULL ELSE c.body END AS body
   FROM svc_response_cache c, svc_response_cache_totals t WHERE c.key = $1 AND t.id = 1 AND ${live('$2::bigint', '$3::bigint')}`,
);

interface StandingRow {
  entry_seq: string;
  bytes_end: string;
  bytes: number;
  expires_ms: number;
  entries_written: string;
  bytes_written: string;
}

const standingOf = (row: StandingRow): EntryStanding => ({
  version: String(row.entry_seq),
  entrySeq: Number(row.entry_seq),
  bytesEnd: Number(row.bytes_end),
  bytes: Number(row.bytes),
  expiresAtMs: Number(row.expires_ms),
  entriesWritten: Number(row.entries_written),
  bytesWritten: Number(row.bytes_written),
});

/** The response cache's SQL (svc_response_cache): every statement touches a bounded number of rows on the request path. */
export class ResponseCacheStore {
  private readonly sequelize: Sequelize;
  private readonly config: ResponseCacheConfig;

  constructor(sequelize: Sequelize, config: ResponseCacheConfig) {
    this.sequelize = sequelize;
    this.config = config;
  }

  /**
   * The key's live entry: where it stands, and its JSON text unless its version is `heldVersion`
   * (the one the caller holds already; `null` when the body was not read). Undefined when the key
   * has no live entry. One primary-key read, as a prepared statement (the hit path is this read
   * and little else, so Sequelize's per-query work showed).
   */
  async read(key: string, heldVersion: string | undefined): Promise<{ standing: EntryStanding; body: string | null } | undefined> {
    const [row] = await queryPrepared<StandingRow & { body: string | null }>(this.sequelize, READ_LIVE_ENTRY, [
      key,
      this.config.maxEntries,
      this.config.maxBytes,
      heldVersion ?? null,
    ]);
    return row === undefined ? undefined : { standing: standingOf(row), body: row.body };
  }

  /**
   * Stores an answer (replacing an older one under the same key) and evicts, in the same
   * statement, those of the oldest entries that the caps or their TTL put out: at most
   * EVICT_WINDOW rows, read by the `entry_seq` index. The totals row is locked only for this
   * statement. Answers where the entry stands (its totals are the running totals after it).
   */
  async write(entry: StoredEntry): Promise<EntryStanding> {
    const [row] = await this.sequelize.query<StandingRow>(
      `WITH t AS (
         UPDATE svc_response_cache_totals SET entries_written = entries_written + 1, bytes_written = bytes_written + :bytes
         WHERE id = 1 RETURNING entries_written, bytes_written
       ), stored AS (
         INSERT INTO svc_response_cache (key, principal, operation, model, body, bytes, entry_seq, bytes_end, created_at, expires_at)
         SELECT :key, :principal, :operation, :model, :body, :bytes, t.entries_written, t.bytes_written, now(), now() + make_interval(secs => :ttlSeconds) FROM t
         ON CONFLICT (key) DO UPDATE SET body = excluded.body, bytes = excluded.bytes, entry_seq = excluded.entry_seq, bytes_end = excluded.bytes_end,
           created_at = excluded.created_at, expires_at = excluded.expires_at
         RETURNING key, entry_seq, bytes_end, bytes, expires_at
       ), evicted AS (
         DELETE FROM svc_response_cache WHERE key IN (
           SELECT oldest.key FROM (SELECT key, entry_seq, bytes_end, bytes, expires_at FROM svc_response_cache ORDER BY entry_seq LIMIT ${EVICT_WINDOW}) oldest, t
           WHERE oldest.key NOT IN (SELECT key FROM stored) AND ${evictable('oldest', ':maxEntries', ':maxBytes')}
         )
       )
       SELECT entry_seq, bytes_end, bytes, floor(extract(epoch FROM expires_at) * 1000)::float8 AS expires_ms,
         entry_seq AS entries_written, bytes_end AS bytes_written FROM stored`,
      {
        replacements: { ...entry, ttlSeconds: this.config.ttlSeconds, maxEntries: this.config.maxEntries, maxBytes: this.config.maxBytes },
        type: QueryTypes.SELECT,
      },
    );
    if (row === undefined) throw new Error('the response cache entry was not stored');
    return standingOf(row);
  }

  /** Entries and bytes that are live, every principal's or one's: a scan bounded by the entry cap, on the report route only. */
  async totals(principal?: string): Promise<{ entries: number; bytes: number }> {
    const [row] = await this.sequelize.query<{ entries: string; bytes: string }>(
      `SELECT count(*) AS entries, coalesce(sum(c.bytes), 0) AS bytes FROM svc_response_cache c, svc_response_cache_totals t
       WHERE t.id = 1 AND (:principal::text IS NULL OR c.principal = :principal) AND ${live(':maxEntries', ':maxBytes')}`,
      { replacements: { maxEntries: this.config.maxEntries, maxBytes: this.config.maxBytes, principal: principal ?? null }, type: QueryTypes.SELECT },
    );
    return { entries: Number(row?.entries ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  /** Deletes every entry, or one model's; answers what went (counting entries already past their TTL or a cap too). */
  async purge(model: string | undefined): Promise<{ entries: number; bytes: number }> {
    const [row] = await this.sequelize.query<{ entries: string; bytes: string }>(
      `WITH gone AS (DELETE FROM svc_response_cache WHERE :model::text IS NULL OR model = :model RETURNING bytes)
       SELECT count(*) AS entries, coalesce(sum(bytes), 0) AS bytes FROM gone`,
      { replacements: { model: model ?? null }, type: QueryTypes.SELECT },
    );
    return { entries: Number(row?.entries ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  /** Housekeeping: deletes a batch of entries past their TTL or the caps (writes evict too; this catches up while none come). */
  async sweep(): Promise<void> {
    await this.sequelize.query(
      `DELETE FROM svc_response_cache WHERE key IN (
         SELECT c.key FROM svc_response_cache c, svc_response_cache_totals t WHERE t.id = 1 AND ${evictable('c', ':maxEntries', ':maxBytes')}
         ORDER BY c.entry_seq LIMIT ${SWEEP_BATCH})`,
      { replacements: { maxEntries: this.config.maxEntries, maxBytes: this.config.maxBytes } },
    );
  }
}
