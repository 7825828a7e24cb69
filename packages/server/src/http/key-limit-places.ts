import { randomBytes } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';

/** The most places a replica leases at once for a busy key. */
export const PLACE_CHUNK = 32;
/** A lease of places is at most this fraction of what the key has free, so leases shrink towards the limit... */
export const PLACE_HEADROOM = 4;
/** ...and below this size none is taken: near the limit every request takes its own place, as before. */
export const PLACE_CHUNK_MIN = 2;
/** A key that asked for its own place this many times within a settle period is busy: it gets leases of places. */
export const BUSY_PLACES = 4;
/** Every this long, a replica gives back the places it held beyond the most it had in use meanwhile. */
export const PLACE_SETTLE_MS = 100;
/** Ids of places held in a replica's lease start so: `svc_limit_leases` rows like any request's lease. */
export const POOL_ID_PREFIX = 'pool_';

/** Keys whose limit leaves room for a lease of places: below it, no replica ever holds spare places. */
export const poolsPossible = (max: number): boolean => Math.floor(max / PLACE_HEADROOM) >= PLACE_CHUNK_MIN;

interface Pool {
  /** The limit the places were leased under: a key whose limit changed gives back its spare places. */
  max: number;
  /** The rows this replica holds for the key, one place each. */
  ids: string[];
  inUse: number;
  /** The most places in use since the last settle: what the replica keeps at the next. */
  peak: number;
  growing: Promise<void> | undefined;
  /** A lease refused (the key near its limit) is not asked for again before this time. */
  growAfter: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Concurrency places a replica leases for busy keys (docs/limits.md, "Places and tokens in
 * chunks"): instead of a short transaction per request to take a place and a delete as it ends,
 * the replica takes a lease of several places (rows of `svc_limit_leases`, under the key's
 * advisory lock, so every replica's rows together never pass the limit) and hands them out from
 * memory. Every `PLACE_SETTLE_MS` it gives back the places it held beyond the most it had in use
 * meanwhile, so an idle key holds none within two periods; a closing server gives back all, and
 * a replica killed outright leaves rows that expire like any lease (60 s, renewed while alive).
 */
export class KeyLimitPlaces {
  readonly #sequelize: Sequelize;
  readonly #onError: (error: unknown) => void;
  readonly #ttlSeconds: number;
  readonly #pools = new Map<string, Pool>();
  /** This replica's prefix of pool ids, and the next id's number. */
  readonly #prefix = `${POOL_ID_PREFIX}${randomBytes(9).toString('base64url')}_`;
  #nextId = 0;
  /** Places taken one by one per subject since `#recentSince` (at most a settle period ago). */
  readonly #recent = new Map<string, number>();
  #recentSince = 0;

  constructor(sequelize: Sequelize, options: { ttlSeconds: number; onError: (error: unknown) => void }) {
    this.#sequelize = sequelize;
    this.#ttlSeconds = options.ttlSeconds;
    this.#onError = options.onError;
  }

  /** The ids of every place this replica leases, for renewal. */
  *heldIds(): Iterable<string> {
    for (const pool of this.#pools.values()) yield* pool.ids;
  }

  /** This replica's pool ids start so: another replica's do not. */
  get prefix(): string {
    return this.#prefix;
  }

  /** A place from the key's lease of places when one is free now (no promise): the common case of a busy key. */
  takeHeld(subject: string, max: number): boolean {
    const pool = this.#pools.get(subject);
    return pool !== undefined && pool.max === max && pool.inUse < pool.ids.length && this.#use(pool);
  }

  /**
   * A place from the key's lease of places, leasing more when the key is busy and its limit leaves
   * room; false when there is none: the caller takes a place of its own (one by one).
   */
  async take(subject: string, max: number): Promise<boolean> {
    let pool = this.#pools.get(subject);
    if (pool && pool.max !== max) {
      pool.max = max;
      this.#trim(pool, pool.inUse);
    }
    while (pool) {
      if (pool.inUse < pool.ids.length) return this.#use(pool);
      if (!pool.growing) break;
      await pool.growing;
      pool = this.#pools.get(subject);
      if (pool && pool.max !== max) return false;
    }
    if (!pool && !this.#busy(subject)) return false;
    if (!poolsPossible(max) || (pool && Date.now() < pool.growAfter)) return false;
    if (!pool) {
      pool = { max, ids: [], inUse: 0, peak: 0, growing: undefined, growAfter: 0, timer: undefined };
      this.#pools.set(subject, pool);
      const held = pool;
      held.timer = setInterval(() => this.#settle(subject, held), PLACE_SETTLE_MS).unref();
    }
    const growing = this.#grow(subject, pool, max);
    pool.growing = growing;
    await growing;
    if (pool.growing === growing) pool.growing = undefined;
    return pool.inUse < pool.ids.length && pool.max === max ? this.#use(pool) : false;
  }

  /** A place taken from the key's lease goes back to it (no round trip). */
  give(subject: string): void {
    const pool = this.#pools.get(subject);
    if (pool && pool.inUse > 0) pool.inUse--;
  }

  /**
   * Before a place is taken one by one: a key that asked `BUSY_PLACES` times within a settle
   * period is busy, and its next request leases places.
   */
  counted(subject: string): void {
    const now = Date.now();
    if (now - this.#recentSince >= PLACE_SETTLE_MS) {
      this.#recent.clear();
      this.#recentSince = now;
    }
    this.#recent.set(subject, (this.#recent.get(subject) ?? 0) + 1);
  }

  /** Gives back every place this replica leases (a closing server, after its requests ended). */
  async close(): Promise<void> {
    const ids: string[] = [];
    for (const pool of this.#pools.values()) {
      clearInterval(pool.timer);
      ids.push(...pool.ids);
      pool.ids = [];
    }
    this.#pools.clear();
    if (ids.length > 0) await this.#delete(ids);
  }

  #busy(subject: string): boolean {
    return Date.now() - this.#recentSince < PLACE_SETTLE_MS && (this.#recent.get(subject) ?? 0) >= BUSY_PLACES;
  }

  #use(pool: Pool): true {
    pool.inUse++;
    if (pool.inUse > pool.peak) pool.peak = pool.inUse;
    return true;
  }

  /**
   * One transaction under the key's lock (the one a request's own place takes): counts the key's
   * live places on every replica and adds this replica's lease of at most a `PLACE_HEADROOM`th of
   * what is free, so the rows never pass the limit.
   */
  async #grow(subject: string, pool: Pool, max: number): Promise<void> {
    const from = this.#nextId;
    this.#nextId += PLACE_CHUNK;
    try {
      const rows = await this.#sequelize.transaction(async (transaction) => {
        await this.#sequelize.query('SELECT pg_advisory_xact_lock(hashtext(:lock))', { replacements: { lock: `svc-limit:${subject}` }, transaction });
        return this.#sequelize.query<{ id: string }>(
          `WITH size AS (
             SELECT LEAST(:chunk, (:max - count(*)) / :headroom)::int AS places FROM svc_limit_leases WHERE subject = :subject AND expires_at > now()
           )
           INSERT INTO svc_limit_leases (id, subject, expires_at)
           SELECT :prefix || place, :subject, now() + make_interval(secs => :ttl)
           FROM size, generate_series(:from::int, :from::int + size.places - 1) AS place WHERE size.places >= :min
           RETURNING id`,
          {
            replacements: {
              subject,
              max,
              chunk: PLACE_CHUNK,
              headroom: PLACE_HEADROOM,
              min: PLACE_CHUNK_MIN,
              prefix: this.#prefix,
              from,
              ttl: this.#ttlSeconds,
            },
            type: QueryTypes.SELECT,
            transaction,
          },
        );
      });
      if (this.#pools.get(subject) !== pool) {
        // Closed meanwhile: the places go straight back.
        if (rows.length > 0) await this.#delete(rows.map((row) => row.id));
        return;
      }
      for (const row of rows) pool.ids.push(row.id);
      if (rows.length === 0) pool.growAfter = Date.now() + PLACE_SETTLE_MS;
    } catch (error) {
      pool.growAfter = Date.now() + PLACE_SETTLE_MS;
      this.#onError(error);
    }
  }

  /** Keeps the most places in use since the last settle; an idle key's lease ends. */
  #settle(subject: string, pool: Pool): void {
    if (pool.growing) return;
    this.#trim(pool, Math.max(pool.peak, pool.inUse));
    pool.peak = pool.inUse;
    if (pool.ids.length === 0 && pool.inUse === 0) {
      clearInterval(pool.timer);
      if (this.#pools.get(subject) === pool) this.#pools.delete(subject);
    }
  }

  #trim(pool: Pool, keep: number): void {
    if (pool.ids.length <= keep) return;
    const spare = pool.ids.splice(keep);
    void this.#delete(spare);
  }

  #delete(ids: string[]): Promise<void> {
    return this.#sequelize.query('DELETE FROM svc_limit_leases WHERE id IN (:ids)', { replacements: { ids } }).then(
      () => {},
      (error: unknown) => this.#onError(error),
    );
  }
}
