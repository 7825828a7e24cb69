import { createHash, randomBytes } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import type { BlackboardPutRequest, BlackboardPutResponse, ReceiptVerification } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import { admitReplay, checkAdmission, putWindows } from './admission.ts';
import { ITEM_COLUMNS, LIVE, recordOf, type ItemRow } from './item-row.ts';
import { normalisePut, type NormalisedPut } from './normalise-put.ts';
import type { PostingSwitch } from './posting-switch.ts';
import type { PutBatcher } from './put-batcher.ts';
import { screenValue } from './screening.ts';
import type { BlackboardConfig } from './blackboard-config.ts';
import { selectRows } from './sql.ts';
import type { Receipts } from '../receipts/index.ts';

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

export interface PutDependencies {
  sequelize: Sequelize;
  settings: BlackboardConfig;
  posting: PostingSwitch;
  /** Stores puts (admission, ordering, retention, durability): see put-batcher.ts. */
  batcher: PutBatcher;
  /** Checks an svc receipt in `value.receipt` (receipts feature). */
  receipts: BoardReceiptVerifier;
}

export type BoardReceiptVerifier = Pick<Receipts, 'verifyBoardReceipt'>;

async function findLiveByIdentity(deps: PutDependencies, keyId: string, idempotencyKey: string): Promise<(ItemRow & { request_hash: string }) | undefined> {
  const [row] = await selectRows<ItemRow & { request_hash: string }>(
    deps.sequelize,
    `SELECT ${ITEM_COLUMNS}, request_hash FROM blackboard_items WHERE key_id = :keyId AND idempotency_key = :idempotencyKey AND ${LIVE}`,
    { keyId, idempotencyKey },
  );
  return row;
}

/** A replay answers the live item; the token stays with whoever got it first. */
async function replay(
  deps: PutDependencies,
  caller: Caller,
  normalised: NormalisedPut,
  keyId: string,
  row: ItemRow & { request_hash: string },
): Promise<BlackboardPutResponse> {
  if (row.request_hash !== normalised.requestHash) {
    throw new ServiceError('blackboard_idempotency_conflict', 'This idempotency_key was already used by this caller for a different put; use a new key.');
  }
  // A replay consumes no admission, but the per-address limiter still applies. Its counter
  // upsert always writes and commits synchronously, so its WAL flush also covers the original
  // put's commit, which may have been seen here before the original's own flush completed.
  await deps.sequelize.transaction((transaction) =>
    admitReplay(deps.sequelize, deps.settings, { ip: caller.ip, keyId, channelKey: normalised.key, bytes: 0 }, transaction),
  );
  return { ...recordOf(row), edit_token: null, original_token_required: true, deduplicated: true };
}

/**
 * Stores the server's verification beside the item it belongs to (it goes when the item goes).
 * Written right after the put batch, so a read racing the put may see the item a moment before
 * its flag; every read after the put's answer sees both.
 */
async function recordVerification(sequelize: Sequelize, itemId: string, verification: ReceiptVerification): Promise<void> {
  await sequelize.query(
    'INSERT INTO blackboard_receipt_verifications (item_id, verification) VALUES (:itemId, :verification::jsonb) ON CONFLICT (item_id) DO NOTHING',
    {
      replacements: { itemId, verification: JSON.stringify(verification) },
    },
  );
}

/**
 * Creates an item: posting switch, normalisation, idempotency, screening, then the batcher
 * stores it: it counts every admission window, inserts the item with a created_at later than any
 * before it and applies the retention cap, all in one transaction (with the other puts of its
 * batch), or refuses it (a window is full) or reports a race (a concurrent put with the same
 * idempotency identity was stored first, which this put then answers as a replay).
 */
export async function putItem(
  deps: PutDependencies,
  request: BlackboardPutRequest,
  caller: Caller,
): Promise<{ created: boolean; body: BlackboardPutResponse }> {
  const posting = await deps.posting.get();
  if (!posting.enabled) {
    throw new ServiceError('blackboard_posting_paused', `Posting is paused${posting.reason ? `: ${posting.reason}` : ''}. Reads and tombstones still work.`, {
      retryable: true,
    });
  }
  const normalised = normalisePut(request);
  const keyId = keyIdOf(caller);
  const { sequelize, settings } = deps;
  if (normalised.idempotencyKey !== null) {
    const existing = await findLiveByIdentity(deps, keyId, normalised.idempotencyKey);
    if (existing) return { created: false, body: await replay(deps, caller, normalised, keyId, existing) };
    // An identity whose item expired or was tombstoned is free again. Releasing it on its own
    // is harmless should the put then fail: nothing live answers to it either way.
    await sequelize.query(`UPDATE blackboard_items SET idempotency_key = NULL WHERE key_id = :keyId AND idempotency_key = :idempotencyKey AND NOT (${LIVE})`, {
      replacements: { keyId, idempotencyKey: normalised.idempotencyKey },
    });
  }

  const item = { ...normalised.value, coprocessor: screenValue(normalised.value) };
  // Before admission: a receipt that does not hold leaves the post as it came, without the flag.
  const verification = await deps.receipts.verifyBoardReceipt(normalised.value.receipt);
  const id = `bb_${randomBytes(12).toString('hex')}`;
  const editToken = `bbt_${randomBytes(24).toString('base64url')}`;
  const windows = putWindows(settings, { ip: caller.ip, keyId, channelKey: normalised.key, bytes: normalised.valueBytes });
  const outcome = await deps.batcher.submit({
    id,
    key: normalised.key,
    task: normalised.task,
    kind: normalised.kind,
    topics: normalised.topics,
    parent_id: normalised.parentId,
    artifact_id: normalised.scope.artifactId,
    revision: normalised.scope.revision,
    runtime_versions: normalised.scope.runtimeVersions ?? null,
    text: String(normalised.value.text),
    item,
    value_bytes: normalised.valueBytes,
    key_id: keyId,
    idempotency_key: normalised.idempotencyKey,
    request_hash: normalised.requestHash,
    edit_token_hash: hashEditToken(editToken),
    ttl_seconds: normalised.ttlSeconds,
    windows: windows.sql,
  });
  if ('inserted' in outcome) {
    if (verification) await recordVerification(sequelize, id, verification);
    const inserted = verification ? { ...outcome.inserted, receipt_verification: verification } : outcome.inserted;
    return { created: true, body: { ...recordOf(inserted), edit_token: editToken, original_token_required: false, deduplicated: false } };
  }
  if ('refused' in outcome) {
    checkAdmission(settings, windows.named, outcome.refused);
    throw new Error(`The put batch refused a put no window refuses: ${JSON.stringify(outcome.refused)}`);
  }
  const winner = await findLiveByIdentity(deps, keyId, normalised.idempotencyKey!);
  if (!winner) throw new ServiceError('conflict', 'A concurrent put with the same idempotency key did not complete; retry.', { retryable: true });
  return { created: false, body: await replay(deps, caller, normalised, keyId, winner) };
}
