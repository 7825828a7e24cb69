import type { Sequelize } from 'sequelize';
import { prepared, queryPrepared } from '../db/prepared.ts';
import { TokenReadings } from './key-limit-token-readings.ts';

/** A chunk of tokens is at most this many of the calls that made the key busy (their estimate)... */
export const TOKEN_CHUNK_CALLS = 256;
/** ...at most this fraction of what the minute has left, so chunks shrink towards the limit... */
export const TOKEN_HEADROOM = 16;
/** ...and below this many calls' estimates none is reserved: near the limit every call reserves its own. */
export const TOKEN_CHUNK_MIN_CALLS = 4;
/** A key that reserved its own tokens this many times within a settle period is busy: it gets chunks. */
export const BUSY_RESERVATIONS = 4;
/** A chunk is settled this long after it was reserved (or when it is used up, or its minute ends). */
export const TOKEN_SETTLE_MS = 100;

/**
 * A chunk of the minute's tokens: taken only when it fits in what the minute has left (`$4`, the
 * limit), as one call's reservation is. The row exists: a call of this minute reserved first.
 */
const READ_AMOUNT = prepared('SELECT amount FROM svc_rate_counters WHERE bucket = $1 AND window_start = $2');
const RESERVE_CHUNK = prepared(
  `UPDATE svc_rate_counters SET amount = amount + $3::bigint
   WHERE bucket = $1::text AND window_start = $2::timestamptz AND amount + $3::bigint <= $4::bigint
   RETURNING amount`,
);
/** A chunk settled: `$3` is what its calls took (reserved and reported) less its size, `$4` the calls that reported usage. */
const SETTLE_CHUNK = prepared(
  `UPDATE svc_rate_counters SET amount = GREATEST(0, amount + $3::bigint), hits = hits + $4::bigint
   WHERE bucket = $1::text AND window_start = $2::timestamptz`,
);
/**
 * A chunk settled (`$3` what its calls took less its size, `$4` the calls that reported) and the
 * next reserved (`$5` tokens, only when they fit under the limit `$6`, as `RESERVE_CHUNK`) in one
 * statement: a busy key's renewal costs one write, not two. `size` is 0 when the next did not fit;
 * the settlement stands either way.
 */
const SETTLE_AND_RESERVE = prepared(
  `WITH counted AS (
     SELECT amount FROM svc_rate_counters WHERE bucket = $1::text AND window_start = $2::timestamptz FOR UPDATE
   ), renewal AS (
     SELECT CASE WHEN GREATEST(0, counted.amount + $3::bigint) + $5::bigint <= $6::bigint THEN $5::bigint ELSE 0 END AS size FROM counted
   )
   UPDATE svc_rate_counters SET amount = GREATEST(0, amount + $3::bigint) + renewal.size, hits = hits + $4::bigint
   FROM renewal
   WHERE bucket = $1::text AND window_start = $2::timestamptz
   RETURNING svc_rate_counters.amount, renewal.size`,
);

export interface TokenChunk {
  readonly bucket: string;
  readonly windowStart: number;
  /** The limit the chunk was reserved under: a key whose limit changed takes no more from it. */
  readonly limit: number;
  /** The tokens it added to the minute's row. */
  readonly size: number;
  /** The minute's tokens in the row once it was reserved, for the `x-ratelimit-remaining-tokens` header. */
  readonly amountAfter: number;
  /** What its calls took: their estimates, corrected to their reported usage as they report. */
  taken: number;
  /** Calls that reported usage while it was open. */
  calls: number;
  /** Calls that took their estimate from it: a chunk none took from is not renewed. */
  takes: number;
  open: boolean;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Tokens-per-minute reservations a replica makes for busy keys from chunks (docs/limits.md,
 * "Places and tokens in chunks"): instead of a read, a reservation and a settlement in the
 * minute's row per call, the replica reserves a chunk of the minute's tokens in one statement
 * (only when it fits under the limit, as a call's reservation does) and takes its calls'
 * estimates from it in memory, correcting them to the usage they report. The chunk is settled
 * (one statement: what its calls took less its size) `TOKEN_SETTLE_MS` after it was reserved;
 * calls still running then settle in the row one by one, as before. The row never counts less
 * than what was reserved from it, so the minute's bound is the one-by-one bound.
 */
export class KeyLimitTokens {
  readonly #sequelize: Sequelize;
  readonly #onError: (error: unknown) => void;
  readonly #chunks = new Map<string, TokenChunk[]>();
  /** Chunks being reserved, by bucket: settled once the statement answered (with a chunk or none). */
  readonly #reserving = new Map<string, Promise<void>>();
  /** The last estimate a call of the bucket asked for: a renewed chunk is sized by it. */
  readonly #lastEstimate = new Map<string, number>();
  readonly #recent = new Map<string, number>();
  #recentSince = 0;
  /** Settlements of calls whose chunk was settled before they ended, summed per minute's row until the next write. */
  readonly #late = new Map<string, { bucket: string; windowStart: number; delta: number; calls: number }>();
  #lateTimer: NodeJS.Timeout | undefined;
  /** Busy keys' readings of the minute, for checks that find no open chunk. */
  readonly #readings = new TokenReadings((bucket, windowStart) => this.readAmount(bucket, windowStart));

  constructor(sequelize: Sequelize, onError: (error: unknown) => void) {
    this.#sequelize = sequelize;
    this.#onError = onError;
  }

  /** The minute's tokens reserved and used, as its row counts them now (0 before its first call). */
  async readAmount(bucket: string, windowStart: number): Promise<number> {
    const [row] = await queryPrepared<{ amount: string }>(this.#sequelize, READ_AMOUNT, [bucket, new Date(windowStart)]);
    return Number(row?.amount ?? 0);
  }

  /** An open chunk of the bucket's minute with room, under this limit: the tokens the minute has left by it. */
  remaining(bucket: string, windowStart: number, limit: number): number | undefined {
    // Checked on every request of a token-limited key: most keys hold no chunk, and this allocates nothing.
    const chunks = this.#chunks.get(bucket);
    if (chunks === undefined) return undefined;
    for (const chunk of chunks) {
      if (chunk.windowStart === windowStart && chunk.limit === limit && chunk.taken < chunk.size) return remainingByChunk(chunk);
    }
    return undefined;
  }

  /**
   * The minute's tokens used, for the check before a request that found no open chunk: read, or
   * a busy key's reading this replica sent within the last 100 ms (`TokenReadings`).
   */
  used(bucket: string, windowStart: number, limit: number, now: number): number | Promise<number> {
    return this.#readings.used(bucket, windowStart, limit, now);
  }

  /** Whether a chunk of the bucket is being reserved (`remainingWhenReserved` has one to wait for). */
  reserving(bucket: string): boolean {
    return this.#reserving.has(bucket);
  }

  /** A write of the bucket's row outside a chunk (a call's reservation or settlement): a reading of it is stale. */
  writing<T>(bucket: string, write: Promise<T>): Promise<T> {
    return this.#readings.writing(bucket, write);
  }

  /**
   * When `remaining` found no open chunk while the bucket's next is being reserved (a busy key's
   * renewal): what that chunk says once it arrived. The call waits one round trip, which its read
   * of the row would have taken, instead of adding it. Undefined when none is coming.
   */
  async remainingWhenReserved(bucket: string, windowStart: number, limit: number): Promise<number | undefined> {
    const reserving = this.#reserving.get(bucket);
    if (!reserving) return undefined;
    await reserving;
    return this.remaining(bucket, windowStart, limit);
  }

  /** As `remainingWhenReserved`, for `take`: the call's estimate from the chunk being reserved, instead of a reservation of its own. */
  async takeWhenReserved(bucket: string, windowStart: number, limit: number, tokens: number): Promise<TokenChunk | undefined> {
    const reserving = this.#reserving.get(bucket);
    if (!reserving) return undefined;
    await reserving;
    return this.take(bucket, windowStart, limit, tokens);
  }

  /**
   * A call's estimate taken from an open chunk of the minute, or undefined (the caller reserves it
   * in the row). A chunk left with less than half reserves the next one ahead.
   */
  take(bucket: string, windowStart: number, limit: number, tokens: number): TokenChunk | undefined {
    this.#lastEstimate.set(bucket, tokens);
    const chunks = this.#chunks.get(bucket);
    if (!chunks) return undefined;
    for (const chunk of [...chunks]) {
      if (chunk.windowStart !== windowStart) {
        void this.#settle(chunk, false);
        continue;
      }
      if (chunk.limit !== limit || chunk.taken + tokens > chunk.size) continue;
      chunk.taken += tokens;
      chunk.takes += 1;
      if (chunk.size - chunk.taken < chunk.size / 2) this.#reserve(bucket, windowStart, limit, tokens, chunk.amountAfter - chunk.size + chunk.taken);
      return chunk;
    }
    return undefined;
  }

  /**
   * After a call reserved its own tokens in the row (the minute at `amount`): a key that did so
   * `BUSY_RESERVATIONS` times within the settle period gets a chunk reserved in the background.
   */
  counted(bucket: string, windowStart: number, limit: number, tokens: number, amount: number): void {
    const now = Date.now();
    if (now - this.#recentSince >= TOKEN_SETTLE_MS) {
      this.#recent.clear();
      this.#recentSince = now;
    }
    const recent = (this.#recent.get(bucket) ?? 0) + 1;
    this.#recent.set(bucket, recent);
    if (recent >= BUSY_RESERVATIONS) this.#reserve(bucket, windowStart, limit, tokens, amount);
  }

  /**
   * A call that took from `chunk` reports `delta` tokens more than it took (negative: fewer, or
   * none: its estimate back). True when the open chunk absorbed it; false when the chunk was
   * settled already, and the caller settles the call in the row.
   */
  settle(chunk: TokenChunk, delta: number, calls: number): void {
    if (chunk.open) {
      chunk.taken += delta;
      chunk.calls += calls;
      return;
    }
    // Its chunk was settled already: summed with the other late calls of the minute and written
    // within TOKEN_SETTLE_MS, one statement for all (a busy key's calls outlive their chunk).
    const key = `${chunk.bucket}\u0000${chunk.windowStart}`;
    const late = this.#late.get(key);
    if (late) {
      late.delta += delta;
      late.calls += calls;
    } else this.#late.set(key, { bucket: chunk.bucket, windowStart: chunk.windowStart, delta, calls });
    this.#lateTimer ??= setTimeout(() => void this.#writeLate(), TOKEN_SETTLE_MS).unref();
  }

  /**
   * Writes the late settlements, except (unless `all`) those of a minute whose key holds an open
   * chunk of it: they go in that chunk's settlement, within TOKEN_SETTLE_MS, not in a write of their own.
   */
  #writeLate(all = false): Promise<unknown> {
    clearTimeout(this.#lateTimer);
    this.#lateTimer = undefined;
    const writes = [...this.#late.values()].filter(
      (late) => all || !this.#chunks.get(late.bucket)?.some((chunk) => chunk.open && chunk.windowStart === late.windowStart),
    );
    for (const late of writes) this.#late.delete(`${late.bucket}\u0000${late.windowStart}`);
    return Promise.all(
      writes.map((late) =>
        this.#readings
          .writing(late.bucket, queryPrepared(this.#sequelize, SETTLE_CHUNK, [late.bucket, new Date(late.windowStart), late.delta, late.calls]))
          .catch(this.#onError),
      ),
    );
  }

  /** Settles every chunk (a closing server). */
  async close(): Promise<void> {
    const settling: Promise<unknown>[] = [];
    for (const chunks of this.#chunks.values()) for (const chunk of [...chunks]) settling.push(this.#settle(chunk, false));
    await Promise.all(settling);
    await this.#writeLate(true);
  }

  /**
   * With `settling` (a renewal), the ended chunk's settlement, and the minute's late ones waiting
   * for their write, go in the same statement; true when they did (false: the caller settles).
   */
  #reserve(bucket: string, windowStart: number, limit: number, tokens: number, amount: number, settling?: { delta: number; calls: number }): boolean {
    if (this.#reserving.has(bucket)) return false;
    const size = Math.min(TOKEN_CHUNK_CALLS * tokens, Math.floor((limit - amount) / TOKEN_HEADROOM));
    if (tokens <= 0 || size < TOKEN_CHUNK_MIN_CALLS * tokens) return false;
    let reserved: Promise<{ amount: string }[]>;
    if (settling) {
      const late = this.#takeLate(bucket, windowStart);
      const values = [bucket, new Date(windowStart), settling.delta + (late?.delta ?? 0), settling.calls + (late?.calls ?? 0), size, limit];
      reserved = queryPrepared<{ amount: string; size: string }>(this.#sequelize, SETTLE_AND_RESERVE, values).then((rows) =>
        rows.filter((row) => Number(row.size) > 0),
      );
    } else reserved = queryPrepared<{ amount: string }>(this.#sequelize, RESERVE_CHUNK, [bucket, new Date(windowStart), size, limit]);
    const reserving = this.#readings
      .writing(bucket, reserved)
      .then(([row]) => {
        if (!row) return;
        const chunk: TokenChunk = {
          bucket,
          windowStart,
          limit,
          size,
          amountAfter: Number(row.amount),
          taken: 0,
          calls: 0,
          takes: 0,
          open: true,
          timer: undefined,
        };
        chunk.timer = setTimeout(() => void this.#settle(chunk, true), TOKEN_SETTLE_MS).unref();
        const chunks = this.#chunks.get(bucket);
        if (chunks) chunks.push(chunk);
        else this.#chunks.set(bucket, [chunk]);
      })
      .catch(this.#onError)
      .finally(() => this.#reserving.delete(bucket));
    this.#reserving.set(bucket, reserving);
    return true;
  }

  /**
   * With `renew` (its period ended), a chunk its calls took from is followed by the next at once
   * (the key is still busy), reserved in the statement that settles it.
   */
  #settle(chunk: TokenChunk, renew: boolean): Promise<unknown> {
    if (!chunk.open) return Promise.resolve();
    chunk.open = false;
    clearTimeout(chunk.timer);
    const chunks = this.#chunks.get(chunk.bucket);
    const index = chunks?.indexOf(chunk) ?? -1;
    if (index >= 0) chunks!.splice(index, 1);
    if (chunks?.length === 0) this.#chunks.delete(chunk.bucket);
    if (renew && chunk.takes > 0 && Date.now() - chunk.windowStart < 60_000) {
      const estimate = Math.max(1, Math.floor(chunk.size / TOKEN_CHUNK_CALLS));
      const renewed = this.#reserve(
        chunk.bucket,
        chunk.windowStart,
        chunk.limit,
        this.#lastEstimate.get(chunk.bucket) ?? estimate,
        chunk.amountAfter - chunk.size + chunk.taken,
        { delta: chunk.taken - chunk.size, calls: chunk.calls },
      );
      if (renewed) return this.#reserving.get(chunk.bucket)!;
    }
    if (!this.#chunks.has(chunk.bucket) && !this.#reserving.has(chunk.bucket)) this.#lastEstimate.delete(chunk.bucket);
    const late = this.#takeLate(chunk.bucket, chunk.windowStart);
    const delta = chunk.taken - chunk.size + (late?.delta ?? 0);
    const calls = chunk.calls + (late?.calls ?? 0);
    if (delta === 0 && calls === 0) return Promise.resolve();
    return this.#readings
      .writing(chunk.bucket, queryPrepared(this.#sequelize, SETTLE_CHUNK, [chunk.bucket, new Date(chunk.windowStart), delta, calls]))
      .catch(this.#onError);
  }

  /** The minute's late settlements waiting for their write, taken to go in a chunk's settlement. */
  #takeLate(bucket: string, windowStart: number): { delta: number; calls: number } | undefined {
    const key = `${bucket}\u0000${windowStart}`;
    const late = this.#late.get(key);
    this.#late.delete(key);
    return late;
  }
}

/** The minute's tokens left as a chunk knows it (its reservation's count, and its own calls since). */
export const remainingByChunk = (chunk: TokenChunk): number => Math.max(0, chunk.limit - (chunk.amountAfter - chunk.size + chunk.taken));
