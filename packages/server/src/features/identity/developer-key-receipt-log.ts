import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { DeveloperCredentialReceipt } from '@svc/schemas';
import { keysetPage, type ListAnswer, listAnswer } from '../../db/keyset-page.ts';
import type { Receipts } from '../receipts/index.ts';
import { developerKeyEventRecord } from './developer-key-receipts.ts';
import { type KeyRow, type ReceiptRow, toReceipt } from './developer-key-rows.ts';
import { newId } from './oauth-tokens.ts';

/**
 * The append-only receipts of developer keys: each change to a key writes one in the change's
 * transaction, and each is answered signed (the signature is derived from the row alone).
 */
export class DeveloperKeyReceiptLog {
  readonly #sequelize: Sequelize;
  readonly #receipts: Receipts;

  constructor(sequelize: Sequelize, receipts: Receipts) {
    this.#sequelize = sequelize;
    this.#receipts = receipts;
  }

  /** A stored receipt with its signature, which is derived from the row alone (the same every time). */
  async present(row: ReceiptRow): Promise<DeveloperCredentialReceipt> {
    return toReceipt(row, await this.#receipts.sign(developerKeyEventRecord(row)));
  }

  /** The `created` receipt of a new key, by its owner: the first of a key, or the new half of a rotation (`related`: the old key). */
  created(transaction: Transaction, row: KeyRow, owner: string, now: Date, related: string | null) {
    return this.insert(transaction, {
      credential_id: row.id,
      owner,
      event: 'created',
      occurred_at: now,
      actor: owner,
      name: row.name,
      scopes: row.scopes,
      related_credential_id: related,
    });
  }

  async insert(
    transaction: Transaction,
    receipt: Omit<ReceiptRow, 'seq' | 'id' | 'occurred_at'> & { owner: string; occurred_at: Date },
  ): Promise<DeveloperCredentialReceipt> {
    const [row] = await this.#sequelize.query<ReceiptRow>(
      `INSERT INTO svc_developer_key_receipts (id, credential_id, owner, event, occurred_at, actor, name, scopes, related_credential_id)
       VALUES (:id, :credentialId, :owner, :event, :occurredAt, :actor, :name, ARRAY[:scopes]::text[], :related) RETURNING *`,
      {
        replacements: {
          id: `dkr_${newId()}`,
          credentialId: receipt.credential_id,
          owner: receipt.owner,
          event: receipt.event,
          occurredAt: receipt.occurred_at,
          actor: receipt.actor,
          name: receipt.name,
          scopes: receipt.scopes,
          related: receipt.related_credential_id,
        },
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return this.present(row!);
  }

  /** A page of one key's receipts, oldest first (the caller has checked the key is visible). */
  async page(credentialId: string, limit: number, cursor: string | undefined): Promise<ListAnswer<DeveloperCredentialReceipt>> {
    const page = await keysetPage<ReceiptRow>(
      this.#sequelize,
      {
        select: '*',
        from: 'svc_developer_key_receipts',
        where: ['credential_id = :id'],
        replacements: { id: credentialId },
        keys: [{ column: 'seq', order: 'ASC', type: 'bigint' }],
        // A cursor given out before was the seq alone, as text.
        earlierCursor: (value) => (typeof value === 'string' ? [value] : undefined),
      },
      { limit, cursor },
    );
    return listAnswer(page, await Promise.all(page.rows.map((row) => this.present(row))));
  }
}
