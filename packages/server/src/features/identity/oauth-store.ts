import { QueryTypes, type Sequelize } from 'sequelize';
import { CREDENTIALS_CHANNEL } from './credential-cache.ts';

/**
 * A revoked single access token shares the revoked-families table under a prefix a family id
 * (a random base64url id) can never have, so checking a token is still one indexed lookup.
 */
const accessTokenKey = (tokenId: string) => `access:${tokenId}`;

/**
 * The only OAuth state: ids of one-time artefacts already used (codes, refresh tokens) and
 * token families revoked after a replay. Rows expire with the artefact they record, so the
 * tables stay small; any replica sees what another spent.
 */
export class OAuthStore {
  readonly #sequelize: Sequelize;
  readonly #revoked: () => void;

  /** `revoked`: after a revocation committed, so this replica's credential cache forgets at once. */
  constructor(sequelize: Sequelize, revoked: () => void = () => {}) {
    this.#sequelize = sequelize;
    this.#revoked = revoked;
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

  /**
   * Kills every token of a family (all descendants of one authorization). The same statement
   * announces it to every replica's credential cache (delivered as it commits).
   */
  async revokeFamily(familyId: string, reason: string, expiresAtSeconds: number): Promise<void> {
    await this.#sequelize.query(
      `WITH revoked AS (
         INSERT INTO svc_oauth_revoked_families (family_id, reason, expires_at) VALUES (:familyId, :reason, to_timestamp(:expiresAt))
         ON CONFLICT (family_id) DO UPDATE SET expires_at = GREATEST(svc_oauth_revoked_families.expires_at, EXCLUDED.expires_at)
         RETURNING 1
       )
       SELECT pg_notify('${CREDENTIALS_CHANNEL}', '') FROM revoked`,
      { replacements: { familyId, reason, expiresAt: expiresAtSeconds } },
    );
    this.#revoked();
  }

  /** Revokes one access token by its id; it is refused from then on, on every replica. */
  async revokeAccessToken(tokenId: string, expiresAtSeconds: number): Promise<void> {
    await this.revokeFamily(accessTokenKey(tokenId), 'access token revoked', expiresAtSeconds);
  }

  /** One lookup for an access token: its family revoked, or the token itself. */
  async isAccessTokenRevoked(tokenId: string, familyId: string | undefined): Promise<boolean> {
    const keys = familyId ? [accessTokenKey(tokenId), familyId] : [accessTokenKey(tokenId)];
    const rows = await this.#sequelize.query('SELECT 1 FROM svc_oauth_revoked_families WHERE family_id IN (:keys) LIMIT 1', {
      replacements: { keys },
      type: QueryTypes.SELECT,
    });
    return rows.length > 0;
  }

  async isFamilyRevoked(familyId: string): Promise<boolean> {
    const rows = await this.#sequelize.query('SELECT 1 FROM svc_oauth_revoked_families WHERE family_id = :familyId', {
      replacements: { familyId },
      type: QueryTypes.SELECT,
    });
    return rows.length > 0;
  }

  /** Drops records whose artefacts have expired anyway. */
  async prune(): Promise<void> {
    await this.#sequelize.query('DELETE FROM svc_oauth_spent WHERE expires_at < now()');
    await this.#sequelize.query('DELETE FROM svc_oauth_revoked_families WHERE expires_at < now()');
  }
}
