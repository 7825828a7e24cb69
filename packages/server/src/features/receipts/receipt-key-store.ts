import { QueryTypes, type Sequelize } from 'sequelize';
import { ReceiptPublicKey, type JsonWebKeySet } from '@svc/schemas';

/**
 * Every public key receipts were ever signed with. A replica records its key when it starts, so
 * the published set is the union over all replicas and all generations: a rotated-out key (or a
 * key of a secret since replaced) stays, and the receipts it signed stay verifiable.
 */
export class ReceiptKeyStore {
  readonly #sequelize: Sequelize;

  constructor(sequelize: Sequelize) {
    this.#sequelize = sequelize;
  }

  async publish(jwk: ReceiptPublicKey): Promise<void> {
    await this.#sequelize.query('INSERT INTO svc_receipt_keys (kid, jwk) VALUES (:kid, :jwk::jsonb) ON CONFLICT (kid) DO NOTHING', {
      replacements: { kid: jwk.kid, jwk: JSON.stringify(jwk) },
    });
  }

  /** The current key first, then the others newest first. */
  async keySet(currentKid: string): Promise<JsonWebKeySet> {
    const rows = await this.#sequelize.query<{ jwk: unknown }>('SELECT jwk FROM svc_receipt_keys ORDER BY kid = :currentKid DESC, first_used_at DESC, kid', {
      replacements: { currentKid },
      type: QueryTypes.SELECT,
    });
    return { keys: rows.map((row) => ReceiptPublicKey.parse(typeof row.jwk === 'string' ? JSON.parse(row.jwk) : row.jwk)) };
  }
}
