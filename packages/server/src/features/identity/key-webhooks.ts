import type { KeyWebhook, KeyWebhookRemoveResponse, KeyWebhookSecretResponse, Scope } from '@svc/schemas';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { newWebhookSecret } from '../../outbound/standard-webhooks.ts';
import { refuseUnfetchableLiteral, vettedAddress, type SourceFetchSeam } from '../../outbound/source-fetch.ts';
import { ServiceError } from '../../service-error.ts';
import { notFound, requireHeld } from './developer-key-rows.ts';

/** Where a key's background responses are announced, and the secret that signs them. */
export interface KeyWebhookEndpoint {
  credentialId: string;
  url: string;
  secret: string;
}

interface EndpointRow {
  credential_id: string;
  url: string;
  secret: string;
  created_at: Date | string;
}

/** Keys a rotation chain is followed back through at most (a guard: a chain is as long as the rotations made). */
const MAX_CHAIN = 10_000;

/**
 * The endpoint of a key, or of the nearest key it was rotated from: a rotation issues a new key
 * id, and the endpoint the owner set should not stop at it.
 */
const NEAREST_ENDPOINT = `
  WITH RECURSIVE chain (id, rotated_from, depth) AS (
    SELECT id, rotated_from, 0 FROM svc_developer_keys WHERE id = :id
    UNION ALL
    SELECT k.id, k.rotated_from, chain.depth + 1 FROM svc_developer_keys k JOIN chain ON k.id = chain.rotated_from WHERE chain.depth < ${MAX_CHAIN}
  )
  SELECT w.credential_id, w.url, w.secret, w.created_at FROM chain JOIN svc_key_webhooks w ON w.credential_id = chain.id ORDER BY chain.depth LIMIT 1`;

const noEndpoint = (credentialId: string) => new ServiceError('key_webhook_not_found', `Developer key ${credentialId} has no webhook endpoint.`);

/**
 * A developer key's own webhook endpoint (issue 43; docs/identity.md, "A key's webhook"): the
 * background responses made with the key are announced there (features/responses/webhooks),
 * signed with the endpoint's own secret, shown once when it is set. The URL passes the PDF URL
 * fetch's address rules when set, and again at each delivery (a name may resolve elsewhere later).
 */
export class KeyWebhooks {
  readonly #sequelize: Sequelize;
  readonly #seam: SourceFetchSeam;

  constructor(sequelize: Sequelize, seam: SourceFetchSeam = {}) {
    this.#sequelize = sequelize;
    this.#seam = seam;
  }

  /** Sets (or replaces) the endpoint of an active key of `owner`'s, with a new secret. */
  async set(owner: string, credentialId: string, url: string, heldScopes: readonly Scope[]): Promise<KeyWebhookSecretResponse> {
    const key = await this.#owned(owner, credentialId);
    requireHeld(key.scopes, heldScopes, 'set the webhook of a key with');
    if (key.status !== 'active')
      throw new ServiceError('credential_revoked', `Developer key ${credentialId} is ${key.status}; only an active key's webhook can be set.`);
    refuseUnfetchableLiteral(url, this.#seam);
    await vettedAddress(new URL(url).hostname, this.#seam);
    const secret = newWebhookSecret();
    const [row] = await this.#sequelize.query<EndpointRow>(
      `INSERT INTO svc_key_webhooks (credential_id, url, secret) VALUES (:id, :url, :secret)
       ON CONFLICT (credential_id) DO UPDATE SET url = EXCLUDED.url, secret = EXCLUDED.secret, created_at = now()
       RETURNING credential_id, url, secret, created_at`,
      { replacements: { id: credentialId, url, secret }, type: QueryTypes.SELECT },
    );
    return { ...present(credentialId, row!), secret };
  }

  /** The endpoint the key's responses go to (never its secret). */
  async get(owner: string, credentialId: string): Promise<KeyWebhook> {
    await this.#owned(owner, credentialId);
    const row = await this.#nearest(credentialId);
    if (!row) throw noEndpoint(credentialId);
    return present(credentialId, row);
  }

  /** Removes the endpoint the key's responses go to (its own, or the one kept from the key it was rotated from). */
  async remove(owner: string, credentialId: string, heldScopes: readonly Scope[]): Promise<KeyWebhookRemoveResponse> {
    const key = await this.#owned(owner, credentialId);
    requireHeld(key.scopes, heldScopes, 'remove the webhook of a key with');
    const row = await this.#nearest(credentialId);
    if (row) await this.#sequelize.query('DELETE FROM svc_key_webhooks WHERE credential_id = :id', { replacements: { id: row.credential_id } });
    return { object: 'developer_key.webhook', credential_id: credentialId, deleted: row !== undefined };
  }

  /** Where a delivery for the key goes now, and what signs it; undefined when it has none. Read in `transaction` when given (a reaped task's end). */
  async endpointOf(credentialId: string, transaction?: Transaction): Promise<KeyWebhookEndpoint | undefined> {
    const row = await this.#nearest(credentialId, transaction);
    return row && { credentialId: row.credential_id, url: row.url, secret: row.secret };
  }

  async #nearest(credentialId: string, transaction?: Transaction): Promise<EndpointRow | undefined> {
    const [row] = await this.#sequelize.query<EndpointRow>(NEAREST_ENDPOINT, {
      replacements: { id: credentialId },
      type: QueryTypes.SELECT,
      ...(transaction ? { transaction } : {}),
    });
    return row;
  }

  async #owned(owner: string, credentialId: string): Promise<{ scopes: Scope[]; status: string }> {
    const [key] = await this.#sequelize.query<{ scopes: Scope[]; status: string }>(
      'SELECT scopes, status FROM svc_developer_keys WHERE id = :id AND owner = :owner',
      { replacements: { id: credentialId, owner }, type: QueryTypes.SELECT },
    );
    if (!key) throw notFound(credentialId);
    return key;
  }
}

const present = (credentialId: string, row: EndpointRow): KeyWebhook => ({
  object: 'developer_key.webhook',
  credential_id: credentialId,
  url: row.url,
  created_at: new Date(row.created_at).toISOString(),
});
