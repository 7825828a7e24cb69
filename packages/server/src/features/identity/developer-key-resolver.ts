import { timingSafeEqual } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { EffectiveLimits, Scope } from '@svc/schemas';
import { prepared, queryPrepared } from '../../db/prepared.ts';
import { asyncCommitSql } from '../../db/wal-flush.ts';
import { KeyLimitSlots } from '../../http/key-limit-slots.ts';
import type { CredentialCache } from './credential-cache.ts';
import { hashDeveloperKey } from './developer-key-format.ts';
import type { KeyRow } from './developer-key-rows.ts';

/** A verified key as the credential cache keeps it: the key's row without its secret. */
export interface CachedKey {
  credentialId: string;
  owner: string;
  scopes: Scope[];
  limits: EffectiveLimits;
  /** When the key stops working (ms since the epoch), or null: checked on every use of the cached copy too. */
  expiresAt: number | null;
}

/** Whether a key row may authenticate now: active and not past its expiry. */
const usable = (row: Pick<KeyRow, 'status' | 'expires_at'>, now = Date.now()) =>
  row.status === 'active' && (row.expires_at === null || new Date(row.expires_at).getTime() > now);
const expiryOf = (row: Pick<KeyRow, 'expires_at'>) => (row.expires_at === null ? null : new Date(row.expires_at).getTime());

/**
 * A key's row and, for a key with a requests-per-minute limit whose secret matches, the minute's
 * hit (the limiter's statement, see http/key-limits.ts: only while under the limit, committed
 * asynchronously). One round trip where the limiter would add a second. With `$6` false (the
 * request holds a slot this replica reserved, `KeyLimitSlots`) it only reads the key.
 */
const RESOLVE_AND_COUNT = prepared(
  `WITH key AS (
     SELECT owner, scopes, secret_hash, status, limits, expires_at, COALESCE((limits->>'requests_per_minute')::bigint, $3::bigint) AS rpm
     FROM svc_developer_keys WHERE id = $1::text
   ), hit AS (
     INSERT INTO svc_rate_counters (bucket, window_start, hits, amount)
     SELECT $5::text, $4::timestamptz, 1, 0 FROM key, (SELECT ${asyncCommitSql}) AS commit_mode
     WHERE key.status = 'active' AND (key.expires_at IS NULL OR key.expires_at > now()) AND key.secret_hash = $2::text AND key.rpm IS NOT NULL AND $6::boolean
     ON CONFLICT (bucket, window_start) DO UPDATE SET hits = svc_rate_counters.hits + 1
       WHERE svc_rate_counters.hits + 1 <= (SELECT rpm FROM key)
     RETURNING hits
   )
   SELECT key.owner, key.scopes, key.secret_hash, key.status, key.limits, key.expires_at, key.rpm, (SELECT hits FROM hit) AS hits FROM key`,
);

/**
 * Turns a presented developer key into its owner, scopes and limits on every authenticated
 * request: the hot path, kept apart from the management of keys (developer-key-service.ts),
 * with the credential cache and the requests-per-minute slots it alone uses.
 */
export class DeveloperKeyResolver {
  readonly #sequelize: Sequelize;
  readonly #slots: KeyLimitSlots;
  readonly #cache: CredentialCache<CachedKey> | undefined;

  constructor(sequelize: Sequelize, options: { onError?: (error: unknown) => void; cache?: CredentialCache<CachedKey> }) {
    this.#sequelize = sequelize;
    this.#slots = new KeyLimitSlots(sequelize, options.onError ?? ((error) => process.emitWarning(error as Error)));
    this.#cache = options.cache;
  }

  /** This replica's cached keys are stale: a key changed (rotate, revoke, limits). */
  forget(): void {
    this.#cache?.clear();
  }

  /** Gives back the requests-per-minute slots this replica holds for busy keys. */
  close(): Promise<void> {
    return this.#slots.close();
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
    if (cached?.credentialId === credentialId && cached.expiresAt !== null && cached.expiresAt <= Date.now()) return undefined;
    if (cached?.credentialId === credentialId) {
      this.#cache!.refresh(hash, async () => {
        const row = await this.#readKey(credentialId, hash);
        return row && { value: { credentialId, owner: row.owner, scopes: row.scopes, limits: row.limits, expiresAt: expiryOf(row) } };
      });
      const found = { owner: cached.owner, scopes: cached.scopes, limits: cached.limits };
      const rpm = cached.limits.requests_per_minute ?? count?.defaultLimit;
      if (!count || rpm === undefined) return found;
      // A busy key's slot, held by this replica or coming in the chunk it is reserving, counts the
      // request without a write of its own; else the statement below counts it (and makes the key
      // busy once it is).
      const bucket = `limits:rpm:key:${credentialId}`;
      const slot = this.#slots.take(bucket, count.windowStart.getTime()) ?? (await this.#slots.takeWhenReserved(bucket, count.windowStart.getTime()));
      if (slot?.limit === rpm) return { ...found, counted: { hits: slot.ordinal } };
      if (slot) this.#slots.giveBack(bucket, slot, { dropChunks: true });
    }
    const generation = this.#cache?.generation ?? 0;
    const remember = (found: { owner: string; scopes: Scope[]; limits: EffectiveLimits }, expiresAt: number | null) =>
      this.#cache?.set(hash, { credentialId, owner: found.owner, scopes: found.scopes, limits: found.limits, expiresAt }, generation);
    if (count) {
      const counted = await this.#resolveCounting(credentialId, key, count);
      if (!counted) return undefined;
      const { expiresAt, ...found } = counted;
      remember(found, expiresAt);
      return found;
    }
    const row = await this.#readKey(credentialId, hash);
    if (!row) return undefined;
    const found = { owner: row.owner, scopes: row.scopes, limits: row.limits };
    remember(found, expiryOf(row));
    return found;
  }

  /** A key's row when it is active and `hash` is its secret's. */
  async #readKey(credentialId: string, hash: string) {
    const [row] = await this.#sequelize.query<Pick<KeyRow, 'owner' | 'scopes' | 'secret_hash' | 'status' | 'limits' | 'expires_at'>>(
      'SELECT owner, scopes, secret_hash, status, limits, expires_at FROM svc_developer_keys WHERE id = :id',
      {
        replacements: { id: credentialId },
        type: QueryTypes.SELECT,
      },
    );
    if (!row || !usable(row)) return undefined;
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
      queryPrepared<Pick<KeyRow, 'owner' | 'scopes' | 'secret_hash' | 'status' | 'limits' | 'expires_at'> & { rpm: string | null; hits: string | null }>(
        this.#sequelize,
        RESOLVE_AND_COUNT,
        [credentialId, hash, count.defaultLimit ?? null, count.windowStart, bucket, counting],
      );
    const slot = this.#slots.take(bucket, windowStart);
    let [row] = await run(slot === undefined);
    if (!row || !usable(row) || !timingSafeEqual(Buffer.from(row.secret_hash, 'hex'), Buffer.from(hash, 'hex'))) {
      if (slot) this.#slots.giveBack(bucket, slot, { dropChunks: false });
      return undefined;
    }
    const found = { owner: row.owner, scopes: row.scopes, limits: row.limits, expiresAt: expiryOf(row) };
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
