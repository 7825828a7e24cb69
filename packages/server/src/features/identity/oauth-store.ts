import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * The only OAuth state: ids of one-time artefacts already used (codes, refresh tokens) and
 * token families revoked after a replay. Rows expire with the artefact they record, so the
 * tables stay small; any replica sees what another spent.
 */
export class OAuthStore {
  readonly #sequelize: Sequelize;

  constructor(sequelize: Sequelize) {
    this.#sequelize = sequelize;
  }

  /** Marks an id spent; false when it already was (a replay). Atomic across replicas. */
  async spend(id: string, kind: 'code' | 'refresh', familyId: string, expiresAtSeconds: number): Promise<boolean> {
    const rows = await this.#sequelize.query(
      `INSERT INTO svc_oauth_spent (id, kind, family_id, expires_at) VALUES (:id, :kind, :familyId, to_timestamp(:expiresAt))
       ON CONFLICT (id) DO NOTHING RETURNING id`,
      { replacements: { id: `${kind}:${id}`, kind, familyId, expiresAt: expiresAtSeconds }, type: QueryTypes.SELECT },
    );
    return rows.length === 1;
  }

  /** Kills every token of a family (all descendants of one authorization). */
  async revokeFamily(familyId: string, reason: string, expiresAtSeconds: number): Promise<void> {
    await this.#sequelize.query(
      `INSERT INTO svc_oauth_revoked_families (family_id, reason, expires_at) VALUES (:familyId, :reason, to_timestamp(:expiresAt))
       ON CONFLICT (family_id) DO UPDATE SET expires_at = GREATEST(svc_oauth_revoked_families.expires_at, EXCLUDED.expires_at)`,
      { replacements: { familyId, reason, expiresAt: expiresAtSeconds } },
    );
  }

  async isFamilyRevoked(familyId: string): Promise<boolean> {
    const rows = await this.#sequelize.query('SELECT 1 FROM svc_oauth_revoked_families WHERE family_id = :familyId', { replacements: { familyId }, type: QueryTypes.SELECT });
    return rows.length > 0;
  }

  /** Drops records whose artefacts have expired anyway. */
  async prune(): Promise<void> {
    await this.#sequelize.query('DELETE FROM svc_oauth_spent WHERE expires_at < now()');
    await this.#sequelize.query('DELETE FROM svc_oauth_revoked_families WHERE expires_at < now()');
  }
}
