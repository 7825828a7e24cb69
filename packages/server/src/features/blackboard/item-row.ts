import type { BlackboardRecord, ReceiptVerification } from '@svc/schemas';
import { isoOf } from './sql.ts';

/** The columns a read selects. */
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

export const ITEM_COLUMNS =
  'id, key, item, created_at, expires_at, tombstoned_at, runtime_versions, (SELECT verification FROM blackboard_receipt_verifications WHERE item_id = blackboard_items.id) AS receipt_verification';

/** Live means neither tombstoned nor expired; reads only ever see live rows. */
export const LIVE = 'tombstoned_at IS NULL AND expires_at > now()';

export function recordOf(row: ItemRow): BlackboardRecord {
  const created = new Date(isoOf(row.created_at));
  const expires = new Date(isoOf(row.expires_at));
  return {
    id: row.id,
    key: row.key,
    created_at: created.toISOString(),
    expires_at: expires.toISOString(),
    ttl_seconds: Math.round((expires.getTime() - created.getTime()) / 1000),
    item: typeof row.item === 'string' ? JSON.parse(row.item) : row.item,
    tombstone: row.tombstoned_at !== null,
    // Only the server's own verification sets these; a receipt_verified the poster sent stays inside `item`.
    ...(row.receipt_verification
      ? { receipt_verified: true as const, receipt_verification: typeof row.receipt_verification === 'string' ? (JSON.parse(row.receipt_verification) as ReceiptVerification) : row.receipt_verification }
      : {}),
  };
}
