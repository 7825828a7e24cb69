import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type {
  DeveloperCredential,
  DeveloperCredentialReceipt,
  DeveloperCredentialSecretResponse,
  DeveloperCredentialRevokeResponse,
  KeyLimits,
  KeyUsagePage,
  Principal,
  Scope,
} from '@svc/schemas';
import { keysetPage, type ListAnswer, listAnswer } from '../../db/keyset-page.ts';
import { likePattern } from '../../db/like-pattern.ts';
import type { RowScope } from '../../http/everyone-view.ts';
import { ServiceError } from '../../service-error.ts';
import type { Receipts } from '../receipts/index.ts';
import { NOTIFY_CREDENTIALS_SQL, type CredentialCache } from './credential-cache.ts';
import { newDeveloperKey } from './developer-key-format.ts';
import { DeveloperKeyReceiptLog } from './developer-key-receipt-log.ts';
import { type CachedKey, DeveloperKeyResolver } from './developer-key-resolver.ts';
import { KEY_COLUMNS_WITH_SPEND, type KeyRow, notFound, type ReceiptRow, requireHeld, toCredential } from './developer-key-rows.ts';
import { keyUsagePage } from './key-usage.ts';

const DAY_MS = 86_400_000;

/**
 * Developer keys of OAuth principals. The secret exists only in the create and rotate answers;
 * the database holds its SHA-256. Every change writes an append-only receipt in the same transaction.
 */
export class DeveloperKeyService {
  readonly #sequelize: Sequelize;
  readonly #maxActive: number;
  readonly #log: DeveloperKeyReceiptLog;

  readonly #resolver: DeveloperKeyResolver;
  readonly #flushUsage: (() => Promise<void>) | undefined;
  readonly #onUsed: ((credentialId: string) => void) | undefined;

  constructor(
    sequelize: Sequelize,
    options: {
      maxActive: number;
      receipts: Receipts;
      onError?: (error: unknown) => void;
      cache?: CredentialCache<CachedKey>;
      /** Writes this replica's pending usage counters (key-usage-batch.ts), so a key's usage read here includes its calls made here. */
      flushUsage?: () => Promise<void>;
      /** A request authenticated with the key: its last use, written in batches (key-usage-batch.ts). */
      onUsed?: (credentialId: string) => void;
    },
  ) {
    this.#sequelize = sequelize;
    this.#maxActive = options.maxActive;
    this.#log = new DeveloperKeyReceiptLog(sequelize, options.receipts);
    this.#resolver = new DeveloperKeyResolver(sequelize, options);
    this.#flushUsage = options.flushUsage;
    this.#onUsed = options.onUsed;
  }

  /**
   * A change to a key that a cached copy would miss (rotate, revoke, limits): announced to every
   * replica inside its transaction (delivered only if it commits), and this replica's cache is
   * emptied once it committed, before the answer goes out.
   */
  async #changing<T>(change: (transaction: Transaction) => Promise<T>): Promise<T> {
    const result = await this.#sequelize.transaction(async (transaction) => {
      const done = await change(transaction);
      await this.#sequelize.query(NOTIFY_CREDENTIALS_SQL, { transaction });
      return done;
    });
    this.#resolver.forget();
    return result;
  }

  /** Gives back the requests-per-minute slots this replica holds for busy keys. */
  close(): Promise<void> {
    return this.#resolver.close();
  }

  /** See DeveloperKeyResolver.resolve: the owner, scopes and limits of a presented key, counted against its minute. */
  async resolve(...args: Parameters<DeveloperKeyResolver['resolve']>): ReturnType<DeveloperKeyResolver['resolve']> {
    const found = await this.#resolver.resolve(...args);
    if (found) this.#onUsed?.(args[0]);
    return found;
  }

  async #insertKey(
    transaction: Transaction,
    owner: string,
    name: string,
    scopes: Scope[],
    createdAt: Date,
    rotatedFrom: string | null,
    limits: KeyLimits,
    expiresAt: Date | null,
  ): Promise<{ row: KeyRow; key: string }> {
    const fresh = newDeveloperKey();
    const [row] = await this.#sequelize.query<KeyRow>(
      `INSERT INTO svc_developer_keys (id, owner, name, scopes, secret_hash, status, created_at, rotated_from, limits, expires_at)
       VALUES (:id, :owner, :name, ARRAY[:scopes]::text[], :hash, 'active', :createdAt, :rotatedFrom, jsonb_strip_nulls(:limits::jsonb), :expiresAt) RETURNING *`,
      {
        replacements: {
          id: fresh.credentialId,
          owner,
          name,
          scopes,
          hash: fresh.hash,
          createdAt,
          rotatedFrom,
          limits: JSON.stringify(limits),
          expiresAt,
        },
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return { row: row!, key: fresh.key };
  }

  async create(
    owner: string,
    request: { name: string; scopes: Scope[]; limits?: KeyLimits; expires_in_days?: number },
    heldScopes: readonly Scope[],
  ): Promise<DeveloperCredentialSecretResponse> {
    requireHeld(request.scopes, heldScopes, 'create a key with');
    return this.#sequelize.transaction(async (transaction) => {
      // Serialise creations per owner so the active-key cap holds under concurrency.
      await this.#sequelize.query('SELECT pg_advisory_xact_lock(hashtext(:owner))', { replacements: { owner: `svc-dk:${owner}` }, transaction });
      const [count] = await this.#sequelize.query<{ active: string }>(
        "SELECT count(*) AS active FROM svc_developer_keys WHERE owner = :owner AND status = 'active'",
        {
          replacements: { owner },
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      if (Number(count!.active) >= this.#maxActive) {
        throw new ServiceError('credential_limit_reached', `You hold ${this.#maxActive} active developer keys, the most allowed; revoke one first.`);
      }
      const now = new Date();
      const expiresAt = request.expires_in_days === undefined ? null : new Date(now.getTime() + request.expires_in_days * DAY_MS);
      const { row, key } = await this.#insertKey(transaction, owner, request.name, request.scopes, now, null, request.limits ?? {}, expiresAt);
      const receipt = await this.#log.created(transaction, row, owner, now, null);
      return { credential: toCredential(row), secret: key, receipt };
    });
  }

  /**
   * A page of keys, newest first: the owner's, or every owner's for the operator's view (`rows`).
   * `search` keeps the keys whose name, id or owner holds it. Each key's last use is as of the
   * last flush of the usage batch, so this replica's pending uses are written first.
   */
  async list(rows: RowScope, query: { limit: number; cursor?: string; search?: string }): Promise<ListAnswer<DeveloperCredential>> {
    await this.#flushUsage?.();
    const page = await keysetPage<KeyRow>(
      this.#sequelize,
      {
        select: KEY_COLUMNS_WITH_SPEND,
        from: 'svc_developer_keys k',
        where: [!rows.everyone && 'k.owner = :owner', query.search !== undefined && '(k.name ILIKE :search OR k.id ILIKE :search OR k.owner ILIKE :search)'],
        replacements: { owner: rows.everyone ? null : rows.principal.id, search: query.search === undefined ? null : likePattern(query.search) },
        keys: [
          { column: 'k.created_at', order: 'DESC', type: 'timestamptz' },
          { column: 'k.id', order: 'DESC', type: 'text' },
        ],
      },
      { limit: query.limit, cursor: query.cursor },
    );
    return listAnswer(page, page.rows.map(toCredential));
  }

  async #lockOwned(transaction: Transaction, owner: string, credentialId: string): Promise<KeyRow> {
    const [row] = await this.#sequelize.query<KeyRow>('SELECT * FROM svc_developer_keys WHERE id = :id AND owner = :owner FOR UPDATE', {
      replacements: { id: credentialId, owner },
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!row) throw notFound(credentialId);
    return row;
  }

  /** Old key dead and new key issued in one transaction: no moment with both or neither. */
  async rotate(owner: string, credentialId: string, heldScopes: readonly Scope[]): Promise<DeveloperCredentialSecretResponse> {
    return this.#changing(async (transaction) => {
      const old = await this.#lockOwned(transaction, owner, credentialId);
      requireHeld(old.scopes, heldScopes, 'rotate a key with');
      if (old.status !== 'active')
        throw new ServiceError('credential_revoked', `Developer key ${credentialId} is ${old.status}; only an active key can be rotated.`);
      const now = new Date();
      const { row, key } = await this.#insertKey(transaction, owner, old.name, old.scopes, now, old.id, old.limits, old.expires_at);
      const ending = await this.#log.insert(transaction, {
        credential_id: old.id,
        owner,
        event: 'rotated',
        occurred_at: now,
        actor: owner,
        name: old.name,
        scopes: old.scopes,
        related_credential_id: row.id,
      });
      await this.#sequelize.query(
        "UPDATE svc_developer_keys SET status = 'rotated', revoked_at = :now, replaced_by = :newId, ending_receipt_id = :receiptId WHERE id = :id",
        {
          replacements: { now, newId: row.id, receiptId: ending.receipt_id, id: old.id },
          transaction,
        },
      );
      const receipt = await this.#log.created(transaction, row, owner, now, old.id);
      return { credential: toCredential(row), secret: key, receipt };
    });
  }

  /** Immediate and idempotent: a repeated revoke answers the receipt that ended the key. */
  async revoke(owner: string, credentialId: string, heldScopes: readonly Scope[]): Promise<DeveloperCredentialRevokeResponse> {
    return this.#changing(async (transaction) => {
      const row = await this.#lockOwned(transaction, owner, credentialId);
      requireHeld(row.scopes, heldScopes, 'revoke a key with');
      if (row.status !== 'active' && row.ending_receipt_id) {
        const [ending] = await this.#sequelize.query<ReceiptRow>('SELECT * FROM svc_developer_key_receipts WHERE id = :id', {
          replacements: { id: row.ending_receipt_id },
          type: QueryTypes.SELECT,
          transaction,
        });
        return { credential_id: row.id, status: row.status, revoked_at: new Date(row.revoked_at!).toISOString(), receipt: await this.#log.present(ending!) };
      }
      const now = new Date();
      const receipt = await this.#log.insert(transaction, {
        credential_id: row.id,
        owner,
        event: 'revoked',
        occurred_at: now,
        actor: owner,
        name: row.name,
        scopes: row.scopes,
        related_credential_id: null,
      });
      await this.#sequelize.query("UPDATE svc_developer_keys SET status = 'revoked', revoked_at = :now, ending_receipt_id = :receiptId WHERE id = :id", {
        replacements: { now, receiptId: receipt.receipt_id, id: row.id },
        transaction,
      });
      return { credential_id: row.id, status: 'revoked', revoked_at: now.toISOString(), receipt };
    });
  }

  async receipts(owner: string, credentialId: string, limit: number, cursor: string | undefined): Promise<ListAnswer<DeveloperCredentialReceipt>> {
    await this.#requireKey(credentialId, owner);
    return this.#log.page(credentialId, limit, cursor);
  }

  /**
   * A key's own limits: fields present replace (null clears), absent fields stay. The owner acts
   * on its keys only; the operator on any. Like rotate and revoke, the calling token must hold
   * every scope of the key: a session narrowed to `models:read` must not lift the credit cap of
   * a `billing:write` key. Every replica's cache forgets the key (`#changing`), so the next
   * request on any replica is held to the new values.
   */
  async update(actor: Principal, credentialId: string, limits: KeyLimits): Promise<DeveloperCredential> {
    return this.#changing(async (transaction) => {
      const [key] = await this.#sequelize.query<Pick<KeyRow, 'scopes'>>(
        `SELECT scopes FROM svc_developer_keys WHERE id = :id ${actor.kind === 'operator' ? '' : 'AND owner = :owner'} FOR UPDATE`,
        { replacements: { id: credentialId, owner: actor.id }, type: QueryTypes.SELECT, transaction },
      );
      if (!key) throw notFound(credentialId);
      requireHeld(key.scopes, actor.scopes, 'change a key with');
      const [row] = await this.#sequelize.query<KeyRow>(
        `UPDATE svc_developer_keys k SET limits = jsonb_strip_nulls(limits || :patch::jsonb) WHERE id = :id RETURNING ${KEY_COLUMNS_WITH_SPEND}`,
        { replacements: { id: credentialId, patch: JSON.stringify(limits) }, type: QueryTypes.SELECT, transaction },
      );
      return toCredential(row!);
    });
  }

  /** A key's usage per UTC day and model; its owner or the operator reads it. */
  async usage(actor: Principal, credentialId: string, limit: number, cursor: string | undefined): Promise<KeyUsagePage> {
    await this.#requireKey(credentialId, actor.kind === 'operator' ? undefined : actor.id);
    await this.#flushUsage?.();
    return keyUsagePage(this.#sequelize, credentialId, limit, cursor);
  }

  /** 404 unless the key exists and, when `owner` is given, is that owner's: another's key is answered as one that does not exist. */
  async #requireKey(credentialId: string, owner: string | undefined): Promise<void> {
    const [found] = await this.#sequelize.query(`SELECT 1 FROM svc_developer_keys WHERE id = :id ${owner === undefined ? '' : 'AND owner = :owner'}`, {
      replacements: { id: credentialId, owner: owner ?? null },
      type: QueryTypes.SELECT,
    });
    if (!found) throw notFound(credentialId);
  }
}
