import { timingSafeEqual } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type {
  DeveloperCredential,
  DeveloperCredentialReceipt,
  DeveloperCredentialSecretResponse,
  DeveloperCredentialRevokeResponse,
  EffectiveLimits,
  KeyLimits,
  KeyUsagePage,
  Principal,
  Scope,
} from '@svc/schemas';
import { keyLimitNames } from '@svc/schemas';
import { keysetPage, NEWEST_FIRST } from '../../db/keyset-page.ts';
import { ServiceError } from '../../service-error.ts';
import { hashDeveloperKey, keyPrefixOf, newDeveloperKey } from './developer-key-format.ts';
import { newId } from './oauth-tokens.ts';
import type { Receipts } from '../receipts/index.ts';
import { developerKeyEventRecord } from './developer-key-receipts.ts';
import { keyUsagePage } from './key-usage.ts';
import { prepared, queryPrepared } from '../../db/prepared.ts';
import { KeyLimitSlots } from '../../http/key-limit-slots.ts';
import { asyncCommitSql } from '../../db/wal-flush.ts';
import { type CredentialCache, NOTIFY_CREDENTIALS_SQL } from './credential-cache.ts';

/** A verified key as the credential cache keeps it: the key's row without its secret. */
export interface CachedKey {
  credentialId: string;
  owner: string;
  scopes: Scope[];
  limits: EffectiveLimits;
}

interface KeyRow {
  id: string;
  owner: string;
  name: string;
  scopes: Scope[];
  secret_hash: string;
  status: 'active' | 'rotated' | 'revoked';
  created_at: Date;
  revoked_at: Date | null;
  rotated_from: string | null;
  replaced_by: string | null;
  ending_receipt_id: string | null;
  /** Only the limits the key has set; an unset one is absent. */
  limits: EffectiveLimits;
}

interface ReceiptRow {
  seq: string;
  id: string;
  credential_id: string;
  event: DeveloperCredentialReceipt['event'];
  occurred_at: Date;
  actor: string;
  name: string;
  scopes: Scope[];
  related_credential_id: string | null;
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

const toCredential = (row: KeyRow): DeveloperCredential => ({
  credential_id: row.id,
  name: row.name,
  scopes: row.scopes,
  status: row.status,
  key_prefix: keyPrefixOf(row.id),
  created_at: new Date(row.created_at).toISOString(),
  revoked_at: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
  rotated_from: row.rotated_from,
  replaced_by: row.replaced_by,
  limits: Object.fromEntries(keyLimitNames.map((name) => [name, row.limits?.[name] ?? null])) as Required<KeyLimits>,
});

const toReceipt = (row: ReceiptRow, signedReceipt: string): DeveloperCredentialReceipt => ({
  receipt_id: row.id,
  credential_id: row.credential_id,
  event: row.event,
  occurred_at: new Date(row.occurred_at).toISOString(),
  actor: row.actor,
  name: row.name,
  scopes: row.scopes,
  related_credential_id: row.related_credential_id,
  signed_receipt: signedReceipt,
});

/**
 * A token acts on a key only within its own scopes: a session narrowed by refresh must not mint,
 * by rotation, a secret it could not create, nor end a key whose powers it was never given.
 */
function requireHeld(keyScopes: readonly Scope[], heldScopes: readonly Scope[], action: string): void {
  const notHeld = keyScopes.filter((scope) => !heldScopes.includes(scope));
  if (notHeld.length > 0) throw new ServiceError('scope_not_held', `A token cannot ${action} scopes it lacks: ${notHeld.join(', ')}.`);
}

/**
 * A key's row and, for a key with a requests-per-minute limit whose secret matches, the minute's
 * hit (the limiter's statement, see http/key-limits.ts: only while under the limit, committed
 * asynchronously). One round trip where the limiter would add a second. With `$6` false (the
 * request holds a slot this replica reserved, `KeyLimitSlots`) it only reads the key.
 */
const RESOLVE_AND_COUNT = prepared(
  `WITH key AS (
     SELECT owner, scopes, secret_hash, status, limits, COALESCE((limits->>'requests_per_minute')::bigint, $3::bigint) AS rpm
     FROM svc_developer_keys WHERE id = $1::text
   ), hit AS (
     INSERT INTO svc_rate_counters (bucket, window_start, hits, amount)
     SELECT $5::text, $4::timestamptz, 1, 0 FROM key, (SELECT ${asyncCommitSql}) AS commit_mode
     WHERE key.status = 'active' AND key.secret_hash = $2::text AND key.rpm IS NOT NULL AND $6::boolean
     ON CONFLICT (bucket, window_start) DO UPDATE SET hits = svc_rate_counters.hits + 1
       WHERE svc_rate_counters.hits + 1 <= (SELECT rpm FROM key)
     RETURNING hits
   )
   SELECT key.owner, key.scopes, key.secret_hash, key.status, key.limits, key.rpm, (SELECT hits FROM hit) AS hits FROM key`,
);

const notFound = (credentialId: string) => new ServiceError('credential_not_found', `No developer key ${credentialId} among yours.`);

/**
 * Developer keys of OAuth principals. The secret exists only in the create and rotate answers;
 * the database holds its SHA-256. Every change writes an append-only receipt in the same transaction.
 */
export class DeveloperKeyService {
  readonly #sequelize: Sequelize;
  readonly #maxActive: number;
  readonly #receipts: Receipts;

  readonly #slots: KeyLimitSlots;
  readonly #cache: CredentialCache<CachedKey> | undefined;
  readonly #flushUsage: (() => Promise<void>) | undefined;

  constructor(
    sequelize: Sequelize,
    options: {
      maxActive: number;
      receipts: Receipts;
      onError?: (error: unknown) => void;
      cache?: CredentialCache<CachedKey>;
      /** Writes this replica's pending usage counters (key-usage-batch.ts), so a key's usage read here includes its calls made here. */
      flushUsage?: () => Promise<void>;
    },
  ) {
    this.#sequelize = sequelize;
    this.#maxActive = options.maxActive;
    this.#receipts = options.receipts;
    this.#slots = new KeyLimitSlots(sequelize, options.onError ?? ((error) => process.emitWarning(error as Error)));
    this.#cache = options.cache;
    this.#flushUsage = options.flushUsage;
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
    this.#cache?.clear();
    return result;
  }

  /** Gives back the requests-per-minute slots this replica holds for busy keys. */
  close(): Promise<void> {
    return this.#slots.close();
  }

  /** A stored receipt with its signature, which is derived from the row alone (the same every time). */
  async #present(row: ReceiptRow): Promise<DeveloperCredentialReceipt> {
    return toReceipt(row, await this.#receipts.sign(developerKeyEventRecord(row)));
  }

  /** The `created` receipt of a new key, by its owner: the first of a key, or the new half of a rotation (`related`: the old key). */
  #createdReceipt(transaction: Transaction, row: KeyRow, owner: string, now: Date, related: string | null) {
    return this.#insertReceipt(transaction, {
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

  async #insertReceipt(
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
    return this.#present(row!);
  }

  async #insertKey(
    transaction: Transaction,
    owner: string,
    name: string,
    scopes: Scope[],
    createdAt: Date,
    rotatedFrom: string | null,
    limits: KeyLimits,
  ): Promise<{ row: KeyRow; key: string }> {
    const fresh = newDeveloperKey();
    const [row] = await this.#sequelize.query<KeyRow>(
      `INSERT INTO svc_developer_keys (id, owner, name, scopes, secret_hash, status, created_at, rotated_from, limits)
       VALUES (:id, :owner, :name, ARRAY[:scopes]::text[], :hash, 'active', :createdAt, :rotatedFrom, jsonb_strip_nulls(:limits::jsonb)) RETURNING *`,
      {
        replacements: { id: fresh.credentialId, owner, name, scopes, hash: fresh.hash, createdAt, rotatedFrom, limits: JSON.stringify(limits) },
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return { row: row!, key: fresh.key };
  }

  async create(
    owner: string,
    request: { name: string; scopes: Scope[]; limits?: KeyLimits },
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
      const { row, key } = await this.#insertKey(transaction, owner, request.name, request.scopes, now, null, request.limits ?? {});
      const receipt = await this.#createdReceipt(transaction, row, owner, now, null);
      return { credential: toCredential(row), secret: key, receipt };
    });
  }

  async list(owner: string, limit: number, cursor: string | undefined): Promise<Page<DeveloperCredential>> {
    const page = await keysetPage<KeyRow>(
      this.#sequelize,
      { select: '*', from: 'svc_developer_keys', where: ['owner = :owner'], replacements: { owner }, keys: NEWEST_FIRST },
      { limit, cursor },
    );
    return { data: page.rows.map(toCredential), has_more: page.hasMore, next_cursor: page.nextCursor };
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
      const { row, key } = await this.#insertKey(transaction, owner, old.name, old.scopes, now, old.id, old.limits);
      const ending = await this.#insertReceipt(transaction, {
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
      const receipt = await this.#createdReceipt(transaction, row, owner, now, old.id);
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
        return { credential_id: row.id, status: row.status, revoked_at: new Date(row.revoked_at!).toISOString(), receipt: await this.#present(ending!) };
      }
      const now = new Date();
      const receipt = await this.#insertReceipt(transaction, {
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

  async receipts(owner: string, credentialId: string, limit: number, cursor: string | undefined): Promise<Page<DeveloperCredentialReceipt>> {
    const [owned] = await this.#sequelize.query('SELECT 1 FROM svc_developer_keys WHERE id = :id AND owner = :owner', {
      replacements: { id: credentialId, owner },
      type: QueryTypes.SELECT,
    });
    if (!owned) throw notFound(credentialId);
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
    return { data: await Promise.all(page.rows.map((row) => this.#present(row))), has_more: page.hasMore, next_cursor: page.nextCursor };
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
        'UPDATE svc_developer_keys SET limits = jsonb_strip_nulls(limits || :patch::jsonb) WHERE id = :id RETURNING *',
        { replacements: { id: credentialId, patch: JSON.stringify(limits) }, type: QueryTypes.SELECT, transaction },
      );
      return toCredential(row!);
    });
  }

  /** A key's usage per UTC day and model; its owner or the operator reads it. */
  async usage(actor: Principal, credentialId: string, limit: number, cursor: string | undefined): Promise<KeyUsagePage> {
    await this.#assertVisible(actor, credentialId);
    await this.#flushUsage?.();
    return keyUsagePage(this.#sequelize, credentialId, limit, cursor);
  }

  async #assertVisible(actor: Principal, credentialId: string): Promise<void> {
    if (actor.kind === 'operator') {
      const [exists] = await this.#sequelize.query('SELECT 1 FROM svc_developer_keys WHERE id = :id', {
        replacements: { id: credentialId },
        type: QueryTypes.SELECT,
      });
      if (!exists) throw notFound(credentialId);
      return;
    }
    const [owned] = await this.#sequelize.query('SELECT 1 FROM svc_developer_keys WHERE id = :id AND owner = :owner', {
      replacements: { id: credentialId, owner: actor.id },
      type: QueryTypes.SELECT,
    });
    if (!owned) throw notFound(credentialId);
  }

  /**
   * The owner, scopes and own limits of a presented key, or undefined when it is unknown, revoked
   * or rotated. With `count`, the same statement also counts the request against the key's
   * requests-per-minute limit (its own, else `defaultLimit`) when it has one: `hits` is the
   * minute's count, or null when the minute was full.
   */
  async resolve(
    credentialId: string,
    key: string,
    count?: { defaultLimit: number | undefined; windowStart: Date },
  ): Promise<{ owner: string; scopes: Scope[]; limits: EffectiveLimits; counted?: { hits: number | null } } | undefined> {
    const hash = hashDeveloperKey(key);
    const cached = this.#cache?.get(hash);
    if (cached?.credentialId === credentialId) {
      this.#cache!.refresh(hash, async () => {
        const row = await this.#readKey(credentialId, hash);
        return row && { value: { credentialId, owner: row.owner, scopes: row.scopes, limits: row.limits } };
      });
      const found = { owner: cached.owner, scopes: cached.scopes, limits: cached.limits };
      const rpm = cached.limits.requests_per_minute ?? count?.defaultLimit;
      if (!count || rpm === undefined) return found;
      // A busy key's slot, held by this replica, counts the request without the database; else
      // the statement below counts it (and makes the key busy once it is).
      const bucket = `limits:rpm:key:${credentialId}`;
      const slot = this.#slots.take(bucket, count.windowStart.getTime());
      if (slot?.limit === rpm) return { ...found, counted: { hits: slot.ordinal } };
      if (slot) this.#slots.giveBack(bucket, slot, { dropChunks: true });
    }
    const generation = this.#cache?.generation ?? 0;
    const remember = (found: { owner: string; scopes: Scope[]; limits: EffectiveLimits }) =>
      this.#cache?.set(hash, { credentialId, owner: found.owner, scopes: found.scopes, limits: found.limits }, generation);
    if (count) {
      const found = await this.#resolveCounting(credentialId, key, count);
      if (found) remember(found);
      return found;
    }
    const row = await this.#readKey(credentialId, hash);
    if (!row) return undefined;
    const found = { owner: row.owner, scopes: row.scopes, limits: row.limits };
    remember(found);
    return found;
  }

  /** A key's row when it is active and `hash` is its secret's. */
  async #readKey(credentialId: string, hash: string) {
    const [row] = await this.#sequelize.query<Pick<KeyRow, 'owner' | 'scopes' | 'secret_hash' | 'status' | 'limits'>>(
      'SELECT owner, scopes, secret_hash, status, limits FROM svc_developer_keys WHERE id = :id',
      {
        replacements: { id: credentialId },
        type: QueryTypes.SELECT,
      },
    );
    if (!row || row.status !== 'active') return undefined;
    return timingSafeEqual(Buffer.from(row.secret_hash, 'hex'), Buffer.from(hash, 'hex')) ? row : undefined;
  }

  /**
   * A busy key's request takes a slot this replica reserved for the minute when it holds one (the
   * statement then only reads the key), else counts in the statement; a busy key's count far from
   * the limit has the replica reserve a chunk of slots in the background (`KeyLimitSlots`).
   */
  async #resolveCounting(credentialId: string, key: string, count: { defaultLimit: number | undefined; windowStart: Date }) {
    const hash = hashDeveloperKey(key);
    const bucket = `limits:rpm:key:${credentialId}`;
    const windowStart = count.windowStart.getTime();
    const run = (counting: boolean) =>
      queryPrepared<Pick<KeyRow, 'owner' | 'scopes' | 'secret_hash' | 'status' | 'limits'> & { rpm: string | null; hits: string | null }>(
        this.#sequelize,
        RESOLVE_AND_COUNT,
        [credentialId, hash, count.defaultLimit ?? null, count.windowStart, bucket, counting],
      );
    const slot = this.#slots.take(bucket, windowStart);
    let [row] = await run(slot === undefined);
    if (!row || row.status !== 'active' || !timingSafeEqual(Buffer.from(row.secret_hash, 'hex'), Buffer.from(hash, 'hex'))) {
      if (slot) this.#slots.giveBack(bucket, slot, { dropChunks: false });
      return undefined;
    }
    const found = { owner: row.owner, scopes: row.scopes, limits: row.limits };
    const limit = row.rpm === null ? undefined : Number(row.rpm);
    if (slot) {
      if (slot.limit === limit) return { ...found, counted: { hits: slot.ordinal } };
      // The key's limit changed since the chunk was reserved (or it has none now): counted one by one.
      this.#slots.giveBack(bucket, slot, { dropChunks: true });
      if (limit === undefined) return found;
      [row] = await run(true);
      if (!row) return undefined;
    }
    if (limit === undefined) return found;
    const hits = row.hits === null ? null : Number(row.hits);
    if (hits !== null) this.#slots.counted(bucket, windowStart, limit, hits);
    return { ...found, counted: { hits } };
  }
}
