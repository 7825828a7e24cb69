import { QueryTypes, type Sequelize } from 'sequelize';
import type { DeveloperCredentialReceipt } from '@svc/schemas';
import type { ReceiptRecord, RecordLoader } from '../receipts/index.ts';

export const DEVELOPER_KEY_EVENT = 'developer-key-event';

/** A lifecycle receipt row as the signed receipt states it. */
export interface KeyEventRow {
  id: string;
  credential_id: string;
  event: DeveloperCredentialReceipt['event'];
  occurred_at: Date;
  actor: string;
  scopes: string[];
  related_credential_id: string | null;
}

/**
 * What a developer-key receipt attests: the key, the event, when, who acted, the scopes and the
 * related key. The key's name is left out: it is a label for its owner, and a receipt may be
 * shown in public (on the board).
 */
export function developerKeyEventRecord(row: KeyEventRow): ReceiptRecord {
  const occurredAt = new Date(row.occurred_at);
  return {
    kind: DEVELOPER_KEY_EVENT,
    recordId: row.id,
    recordedAt: occurredAt,
    facts: {
      credential_id: row.credential_id,
      event: row.event,
      occurred_at: occurredAt.toISOString(),
      actor: row.actor,
      scopes: [...row.scopes],
      related_credential_id: row.related_credential_id,
    },
  };
}

/** Receipts are append-only, so a stored receipt that matches is exactly the one signed. */
export function developerKeyEventLoader(sequelize: Sequelize): RecordLoader {
  return async (recordId) => {
    const [row] = await sequelize.query<KeyEventRow>(
      'SELECT id, credential_id, event, occurred_at, actor, scopes, related_credential_id FROM svc_developer_key_receipts WHERE id = :id',
      {
        replacements: { id: recordId },
        type: QueryTypes.SELECT,
      },
    );
    return row ? developerKeyEventRecord(row) : undefined;
  };
}
