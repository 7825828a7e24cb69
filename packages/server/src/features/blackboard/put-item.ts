import { createHash, randomBytes } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import type { BlackboardPutRequest, BlackboardPutResponse } from '@svc/schemas';
import { prepared, queryPrepared } from '../../db/prepared.ts';
import { asyncCommitSql, type WalFlusher } from '../../db/wal-flush.ts';
import { ServiceError } from '../../http/service-error.ts';
import { admitReplay, checkAdmission, counterUpsert, orderStampSql } from './admission.ts';
import { ITEM_COLUMNS, LIVE, recordOf, type ItemRow } from './item-row.ts';
import { normalisePut, type NormalisedPut } from './normalise-put.ts';
import type { PostingSwitch } from './posting-switch.ts';
import { screenValue } from './screening.ts';
import type { BlackboardSettings } from './settings.ts';
import { selectRows, SqlParams } from './sql.ts';

export interface Caller {
  ip: string;
  bearer: string | undefined;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The key id: a hash of the bearer, or of the address when there is none. It identifies, it proves nothing. */
export function keyIdOf(caller: Caller): string {
  return `kid_${sha256(caller.bearer !== undefined ? `bearer\0${caller.bearer}` : `ip\0${caller.ip}`).slice(0, 32)}`;
}

export const hashEditToken = (token: string) => sha256(`svc.blackboard.edit\0${token}`);

/** Signals that a concurrent identical put won the idempotency identity. */
class ReplayRace extends Error {}

/** The detail of the error `svc_blackboard_refuse` raised (SQLSTATE SVB01), if that is what this is. */
function refusalDetail(error: unknown): string | undefined {
  // `pg`'s error as queryPrepared throws it, or Sequelize's wrapping of it.
  const raw = error as { code?: unknown; detail?: unknown; parent?: { code?: unknown; detail?: unknown } } | undefined;
  const cause = raw?.code === 'SVB01' ? raw : raw?.parent;
  return cause?.code === 'SVB01' && typeof cause.detail === 'string' ? cause.detail : undefined;
}

export interface PutDependencies {
  sequelize: Sequelize;
  settings: BlackboardSettings;
  posting: PostingSwitch;
  /**
   * Set on PostgreSQL: commit the put asynchronously, then wait for a WAL flush covering it.
   * Absent, puts commit synchronously (the embedded database, which runs with fsync off).
   */
  walFlusher: WalFlusher | undefined;
}

async function findLiveByIdentity(deps: PutDependencies, keyId: string, idempotencyKey: string): Promise<(ItemRow & { request_hash: string }) | undefined> {
  const [row] = await selectRows<ItemRow & { request_hash: string }>(
    deps.sequelize,
    `SELECT ${ITEM_COLUMNS}, request_hash FROM blackboard_items WHERE key_id = $1 AND idempotency_key = $2 AND ${LIVE}`,
    [keyId, idempotencyKey],
  );
  return row;
}

/** A replay answers the live item; the token stays with whoever got it first. */
async function replay(deps: PutDependencies, caller: Caller, normalised: NormalisedPut, keyId: string, row: ItemRow & { request_hash: string }): Promise<BlackboardPutResponse> {
  if (row.request_hash !== normalised.requestHash) {
    throw new ServiceError('blackboard_idempotency_conflict', 'This idempotency_key was already used by this caller for a different put; use a new key.');
  }
  // A replay consumes no admission, but the per-address limiter still applies. Its counter
  // upsert always writes and commits synchronously, so its WAL flush also covers the original
  // put's commit, which may have been seen here before the original's own flush completed.
  await deps.sequelize.transaction((transaction) => admitReplay(deps.sequelize, deps.settings, { ip: caller.ip, keyId, channelKey: normalised.key, bytes: 0 }, transaction));
  return { ...recordOf(row), edit_token: null, original_token_required: true, deduplicated: true };
}

/**
 * Creates an item: posting switch, normalisation, idempotency, screening, then one statement
 * that counts every admission window (which also orders puts: see admission.ts), inserts the
 * item with a created_at later than any before it, and applies the retention cap.
 *
 * Every put locks the shared put-order and global window rows, and PostgreSQL keeps row locks
 * until its transaction ends, so how long a put's transaction lasts after taking them bounds
 * put throughput. Two things would stretch it: a round trip to this process before COMMIT (on
 * a busy server the event loop answers late), and a synchronous COMMIT, which returns only
 * after its WAL flush (an fsync), so puts would queue one fsync each. Hence:
 * - the put is one autocommitted statement: it decides admission itself and, refused or beaten
 *   by a concurrent identical put, raises (`svc_blackboard_refuse`), which rolls everything
 *   back, so no window keeps a refused put and nothing is half done;
 * - on PostgreSQL, while other puts of this process are under way, it commits asynchronously
 *   (the locks go once the commit record is written), and `WalFlusher` then waits for a flush
 *   covering it before the put is answered: still durable before the 201, and concurrent puts
 *   share their flushes (group commit). A put with no other under way commits synchronously:
 *   there is no flush to share, and one round trip is cheaper than two.
 * Admission, ordering and all-or-nothing still come from the row locks and the one
 * transaction; the WAL replays commits in order, so a crash can only drop a suffix of puts
 * nobody was told were accepted.
 */
export async function putItem(deps: PutDependencies, request: BlackboardPutRequest, caller: Caller): Promise<{ created: boolean; body: BlackboardPutResponse }> {
  const posting = await deps.posting.get();
  if (!posting.enabled) {
    throw new ServiceError('blackboard_posting_paused', `Posting is paused${posting.reason ? `: ${posting.reason}` : ''}. Reads and tombstones still work.`, { retryable: true });
  }
  const normalised = normalisePut(request);
  const keyId = keyIdOf(caller);
  const { sequelize, settings } = deps;
  if (normalised.idempotencyKey !== null) {
    const existing = await findLiveByIdentity(deps, keyId, normalised.idempotencyKey);
    if (existing) return { created: false, body: await replay(deps, caller, normalised, keyId, existing) };
    // An identity whose item expired or was tombstoned is free again. Releasing it on its own
    // is harmless should the put then fail: nothing live answers to it either way.
    await sequelize.query(`UPDATE blackboard_items SET idempotency_key = NULL WHERE key_id = $1 AND idempotency_key = $2 AND NOT (${LIVE})`, { bind: [keyId, normalised.idempotencyKey] });
  }

  const item = { ...normalised.value, coprocessor: screenValue(normalised.value) };
  const id = `bb_${randomBytes(12).toString('hex')}`;
  const editToken = `bbt_${randomBytes(24).toString('base64url')}`;
  // Asynchronous commit plus a shared flush when other puts are under way; alone, a put commits
  // synchronously (its COMMIT waits for its own flush, holding its row locks through it).
  const commit = deps.walFlusher?.enter() ?? 'sync';
  try {
    // One statement, its own transaction: count every window (taking the put-order lock),
    // insert the item stamped after every earlier put, apply the retention cap; raise, so roll
    // all of it back, when a window is over its cap or a concurrent identical put inserted first.
    const params = new SqlParams();
    const upsert = counterUpsert(settings, { ip: caller.ip, keyId, channelKey: normalised.key, bytes: normalised.valueBytes }, (value) => params.add(value));
    const p = (value: unknown) => params.add(value);
    let result: { inserted: ItemRow & { seq: number } } | undefined;
    try {
      // The text is the same for every put (all values are bound), so it is prepared once per connection.
      [result] = await queryPrepared<{ inserted: ItemRow & { seq: number } }>(
        sequelize,
        prepared(`WITH counters AS (${upsert.sql}),
         caps (bucket, max_hits, max_amount) AS (${upsert.capsSql()}),
         refused AS (SELECT EXISTS (SELECT 1 FROM counters JOIN caps ON caps.bucket = counters.bucket WHERE counters.hits > caps.max_hits OR counters.amount > caps.max_amount) AS refused),
         -- No stamp (so no insert, and no sequence number spent) when any window is over its cap.
         stamp AS (SELECT to_timestamp(${orderStampSql('counters')} / 1000.0) AS at WHERE NOT (SELECT refused FROM refused)),
         inserted AS (
           INSERT INTO blackboard_items (id, key, task, kind, topics, parent_id, artifact_id, revision, runtime_versions, text, item, value_bytes, key_id, idempotency_key, request_hash, edit_token_hash, created_at, expires_at)
           SELECT ${p(id)}, ${p(normalised.key)}, ${p(normalised.task)}, ${p(normalised.kind)}, ${p(normalised.topics)}::text[], ${p(normalised.parentId)}, ${p(normalised.scope.artifactId)}, ${p(normalised.scope.revision)},
             ${p(normalised.scope.runtimeVersions ? JSON.stringify(normalised.scope.runtimeVersions) : null)}::jsonb, ${p(String(normalised.value.text))}, ${p(JSON.stringify(item))}::jsonb, ${p(normalised.valueBytes)},
             ${p(keyId)}, ${p(normalised.idempotencyKey)}, ${p(normalised.requestHash)}, ${p(hashEditToken(editToken))}, stamp.at, stamp.at + make_interval(secs => ${p(normalised.ttlSeconds)})
           FROM stamp
           ON CONFLICT (key_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
           RETURNING ${ITEM_COLUMNS}, seq
         ),
         retired AS (DELETE FROM blackboard_items WHERE seq <= (SELECT seq - ${p(settings.retentionRows)} FROM inserted) RETURNING 1)
         SELECT (SELECT row_to_json(inserted) FROM inserted) AS inserted,
           CASE
             WHEN (SELECT refused FROM refused) THEN svc_blackboard_refuse((SELECT json_agg(counters) FROM counters)::text)
             WHEN NOT EXISTS (SELECT 1 FROM inserted) THEN svc_blackboard_refuse('race')
           END AS refusal${commit === 'async' ? `, ${asyncCommitSql} AS commit_mode` : ''}`),
        params.values,
      );
    } catch (error) {
      const detail = refusalDetail(error);
      if (detail === undefined) throw error;
      if (detail === 'race') throw new ReplayRace();
      checkAdmission(settings, upsert.windows, JSON.parse(detail) as Array<{ bucket: string; hits: number; amount: number }>);
      throw new Error(`The put statement refused a put no window refuses: ${detail}`);
    }
    // Durable before anyone is told: see above and db/wal-flush.ts. Should this fail, the put
    // may still be stored (as when a COMMIT's answer is lost); a retry with the same
    // idempotency key then answers the stored item.
    if (commit === 'async') await deps.walFlusher!.flush();
    return { created: true, body: { ...recordOf(result!.inserted), edit_token: editToken, original_token_required: false, deduplicated: false } };
  } catch (error) {
    if (!(error instanceof ReplayRace)) throw error;
    const winner = await findLiveByIdentity(deps, keyId, normalised.idempotencyKey!);
    if (!winner) throw new ServiceError('conflict', 'A concurrent put with the same idempotency key did not complete; retry.', { retryable: true });
    return { created: false, body: await replay(deps, caller, normalised, keyId, winner) };
  } finally {
    deps.walFlusher?.leave();
  }
}
