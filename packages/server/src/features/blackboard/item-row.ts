import type { BlackboardRecord, ReceiptVerification } from '@svc/schemas';
import { isoOfMillis } from './iso-millis.ts';

/** The columns a put's replay selects (ITEM_COLUMNS); the put batch answers the same fields as JSON. */
export interface ItemRow {
  id: string;
  key: string;
  item: BlackboardRecord['item'];
  created_at: Date | string;
  expires_at: Date | string;
  tombstoned_at: Date | string | null;
  runtime_versions: Array<{ name: string; version: string }> | null;
  /** Set when the put carried an svc receipt that held (receipt-verification.ts). */
  receipt_verification?: ReceiptVerification | string | null;
}

const RECEIPT_VERIFICATION = '(SELECT verification FROM blackboard_receipt_verifications WHERE item_id = blackboard_items.id) AS receipt_verification';

export const ITEM_COLUMNS = `id, key, item, created_at, expires_at, tombstoned_at, runtime_versions, ${RECEIPT_VERIFICATION}`;

/** Live means neither tombstoned nor expired; reads only ever see live rows. */
export const LIVE = 'tombstoned_at IS NULL AND expires_at > now()';

/**
 * A live item as reads select it (LIVE_ITEM_COLUMNS). Its timestamps come as epoch milliseconds
 * (float8): a number turns into ISO text several times cheaper than the driver parses a
 * timestamptz into a Date; that parsing and the Date round trips of the old mapping were over a
 * quarter of a get's CPU. Tombstoned rows are never read, so there is no tombstone column.
 */
export interface LiveItemRow {
  id: string;
  key: string;
  item: BlackboardRecord['item'];
  created_ms: number | string;
  expires_ms: number | string;
  receipt_verification: ReceiptVerification | string | null;
}

// The epoch of a timestamptz(3) is a whole number of milliseconds; float8 holds it within far less than one.
export const LIVE_ITEM_COLUMNS = `id, key, item, date_part('epoch', created_at) * 1000 AS created_ms, date_part('epoch', expires_at) * 1000 AS expires_ms, ${RECEIPT_VERIFICATION}`;

const millisOf = (value: Date | string | number) => (value instanceof Date ? value.getTime() : typeof value === 'number' ? value : new Date(value).getTime());

function record(
  row: Pick<ItemRow, 'id' | 'key' | 'item' | 'receipt_verification'>,
  createdMs: number,
  expiresMs: number,
  tombstone: boolean,
): BlackboardRecord {
  const record: BlackboardRecord = {
    id: row.id,
    key: row.key,
    created_at: isoOfMillis(createdMs),
    expires_at: isoOfMillis(expiresMs),
    ttl_seconds: Math.round((expiresMs - createdMs) / 1000),
    item: typeof row.item === 'string' ? JSON.parse(row.item) : row.item,
    tombstone,
  };
  // Only the server's own verification sets these; a receipt_verified the poster sent stays inside `item`.
  // (Assigned, not spread in: a spread of a maybe-empty object is a slow path per item.)
  if (row.receipt_verification) {
    record.receipt_verified = true;
    record.receipt_verification =
      typeof row.receipt_verification === 'string' ? (JSON.parse(row.receipt_verification) as ReceiptVerification) : row.receipt_verification;
  }
  return record;
}

export function recordOf(row: ItemRow): BlackboardRecord {
  return record(row, millisOf(row.created_at), millisOf(row.expires_at), row.tombstoned_at !== null);
}

export function liveRecordOf(row: LiveItemRow): BlackboardRecord {
  return record(row, Math.round(Number(row.created_ms)), Math.round(Number(row.expires_ms)), false);
}
