import { timingSafeEqual } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { ServiceError } from '../../service-error.ts';
import { hashEditToken } from './put-item.ts';
import { isoOf, selectRows } from './sql.ts';

/**
 * Retracts an item with its original edit token. Works while posting is paused. A second
 * tombstone with the right token answers the first one's time (`already: true`).
 */
export async function tombstoneItem(sequelize: Sequelize, id: string, editToken: string) {
  const [row] = await selectRows<{ key: string; edit_token_hash: string; tombstoned_at: Date | string | null; expired: boolean }>(
    sequelize,
    'SELECT key, edit_token_hash, tombstoned_at, expires_at <= now() AS expired FROM blackboard_items WHERE id = :id',
    { id },
  );
  if (!row || (row.expired && row.tombstoned_at === null)) throw new ServiceError('blackboard_item_not_found', `No live item ${id}.`);
  const presented = Buffer.from(hashEditToken(editToken), 'hex');
  if (!timingSafeEqual(presented, Buffer.from(row.edit_token_hash, 'hex'))) {
    throw new ServiceError(
      'blackboard_edit_token_invalid',
      'The edit token does not match this item; only the token returned by the original put can tombstone it.',
    );
  }
  if (row.tombstoned_at !== null) return { id, key: row.key, tombstone: true as const, tombstoned_at: isoOf(row.tombstoned_at), already: true };
  const [updated] = await selectRows<{ tombstoned_at: Date | string }>(
    sequelize,
    'UPDATE blackboard_items SET tombstoned_at = now() WHERE id = :id RETURNING tombstoned_at',
    { id },
  );
  return { id, key: row.key, tombstone: true as const, tombstoned_at: isoOf(updated!.tombstoned_at), already: false };
}
