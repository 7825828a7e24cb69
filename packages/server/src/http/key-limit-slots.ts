import type { Sequelize } from 'sequelize';
import { prepared, queryPrepared } from '../db/prepared.ts';
import { asyncCommitSql } from '../db/wal-flush.ts';

/** The most slots a replica reserves at once for a busy key's minute. */
export const SLOT_CHUNK = 256;
/** A chunk is at most this fraction of what the minute has left, so chunks shrink towards the edge... */
export const CHUNK_HEADROOM = 16;
/** ...and below this size none is reserved: near the edge every request is counted one by one. */
export const SLOT_CHUNK_MIN = 16;
/** A key counted one by one this many times within a settle period is busy: it gets chunks. */
export const BUSY_COUNTS = 4;
/** A chunk's unused slots go back to the minute this long after it was reserved, used up or not. */
export const SLOT_SETTLE_MS = 100;
const MINUTE_MS = 60_000;

/**
 * The reservation of `$3` slots: `hits` counts them as taken and `amount` (unused otherwise by a
 * requests bucket) counts the slots lent to replicas and not yet settled. Sized from the count a
 * request saw (`CHUNK_HEADROOM`), it holds while the minute still has half that headroom (the
 * count moved on meanwhile), so near the edge every request is counted one by one.
 */
const RESERVE = prepared(
  `UPDATE svc_rate_counters SET hits = hits + $3::bigint, amount = amount + $3::bigint
   FROM (SELECT ${asyncCommitSql}) AS commit_mode
   WHERE bucket = $1::text AND window_start = $2::timestamptz AND $4::bigint - hits >= $3::bigint * $5::bigint
   RETURNING hits`,
);
/** A chunk settled: its unused slots are given back to the minute and it is lent no more. */
const SETTLE = prepared(
  `UPDATE svc_rate_counters SET hits = hits - $3::bigint, amount = amount - $4::bigint
   FROM (SELECT ${asyncCommitSql}) AS commit_mode
   WHERE bucket = $1::text AND window_start = $2::timestamptz`,
);
/**
 * A chunk settled (`$3` unused of `$4` lent) and the next reserved (`$6` slots, as `RESERVE` takes
 * them) in one statement: a busy key's renewal costs one write, not two. `size` is 0 when the
 * minute has no room for the next; the settlement stands either way.
 */
const SETTLE_AND_RESERVE = prepared(
  `WITH counted AS (
     SELECT hits FROM svc_rate_counters WHERE bucket = $1::text AND window_start = $2::timestamptz FOR UPDATE
   ), renewal AS (
     SELECT CASE WHEN $5::bigint - (counted.hits - $3::bigint) >= $6::bigint * $7::bigint THEN $6::bigint ELSE 0 END AS size FROM counted
   )
   UPDATE svc_rate_counters SET hits = hits - $3::bigint + renewal.size, amount = amount - $4::bigint + renewal.size
   FROM renewal, (SELECT ${asyncCommitSql}) AS commit_mode
   WHERE bucket = $1::text AND window_start = $2::timestamptz
   RETURNING svc_rate_counters.hits, renewal.size`,
);
const LENT = prepared('SELECT amount FROM svc_rate_counters WHERE bucket = $1::text AND window_start = $2::timestamptz');

/** Slots of the bucket's minute lent to replicas and not settled yet (0 when none). */
export async function lentSlots(sequelize: Sequelize, bucket: string, windowStart: Date): Promise<number> {
  const [row] = await queryPrepared<{ amount: string }>(sequelize, LENT, [bucket, windowStart]);
  return Number(row?.amount ?? 0);
}

interface Chunk {
  windowStart: number;
  /** The limit the chunk was reserved under: a key whose limit changed drops its chunks. */
  limit: number;
  /** How many slots it lent. */
  size: number;
  /** The next slot's ordinal in the minute, and the chunk's last. */
  next: number;
  last: number;
  timer: NodeJS.Timeout;
}

/** A slot taken from a chunk: its ordinal in the minute and the limit its chunk was reserved under. */
export interface Slot {
  ordinal: number;
  limit: number;
  windowStart: number;
}

interface BucketSlots {
  chunks: Chunk[];
  /** The chunk being reserved, settled once its statement answered (with a chunk or none). */
  reserving: Promise<void> | undefined;
}

/**
 * Requests-per-minute slots a replica holds for busy keys (docs/limits.md, "Cost on the hot
 * path"): instead of one write to the minute's counter row per request, which every request of
 * the key waits for in turn, the replica reserves a chunk of slots (up to `SLOT_CHUNK`, at most a
 * sixteenth of what the minute has left) in one statement and hands
 * them out locally, then settles the chunk (one more statement) when it is used up or
 * `SLOT_SETTLE_MS` after it was reserved, giving back what was left. The row's `hits` always
 * counts every slot handed out or held, so no replica ever admits past the limit; `amount` counts
 * the slots held and not settled, so a request refused while some are held waits for them to come
 * back (`KeyLimiter`) instead of being refused while the minute still has room.
 */
export class KeyLimitSlots {
  readonly #sequelize: Sequelize;
  readonly #onError: (error: unknown) => void;
  readonly #buckets = new Map<string, BucketSlots>();
  /** Requests counted one by one per bucket since `#recentSince` (at most a settle period ago). */
  readonly #recent = new Map<string, number>();
  #recentSince = 0;

  constructor(sequelize: Sequelize, onError: (error: unknown) => void) {
    this.#sequelize = sequelize;
    this.#onError = onError;
  }

  /**
   * Takes a held slot of the bucket's current minute, or undefined. Chunks of an ended minute are
   * dropped. The slot stands only if the key's limit, read in the same round trip, is still the
   * one its chunk was reserved under: else the caller gives it back (`giveBack`).
   */
  take(bucket: string, windowStart: number): Slot | undefined {
    const slots = this.#buckets.get(bucket);
    if (!slots) return undefined;
    while (slots.chunks.length > 0) {
      const chunk = slots.chunks[0]!;
      if (chunk.windowStart !== windowStart) {
        this.#settle(bucket, chunk);
        continue;
      }
      const ordinal = chunk.next++;
      if (chunk.next > chunk.last) this.#settle(bucket, chunk);
      // Reserved ahead from a quarter used: at 10,000 requests/s a chunk of 256 lasts 25 ms, about
      // as long as a reservation may take on a loaded PostgreSQL, and requests wait for a chunk that is late.
      if (!slots.reserving && this.#held(slots) < (chunk.size * 3) / 4) this.reserve(bucket, windowStart, chunk.limit, ordinal);
      return { ordinal, limit: chunk.limit, windowStart };
    }
    return undefined;
  }

  /**
   * When `take` found no slot while the next chunk of the bucket is being reserved (a busy key's
   * renewal): a slot of that chunk once it arrived. The request waits one round trip, which its
   * own count would have taken, instead of adding a write. Undefined when no chunk is coming.
   */
  async takeWhenReserved(bucket: string, windowStart: number): Promise<Slot | undefined> {
    const reserving = this.#buckets.get(bucket)?.reserving;
    if (!reserving) return undefined;
    await reserving;
    return this.take(bucket, windowStart);
  }

  /**
   * A slot taken for a request that does not use it goes back to the minute: a key presented with
   * a wrong secret, or one whose limit changed since the chunk was reserved (`dropChunks`: every
   * chunk the replica holds for the bucket goes back too, and requests are counted one by one).
   */
  giveBack(bucket: string, slot: Slot, options: { dropChunks: boolean }): void {
    if (options.dropChunks) for (const chunk of [...(this.#buckets.get(bucket)?.chunks ?? [])]) this.#settle(bucket, chunk);
    queryPrepared(this.#sequelize, SETTLE, [bucket, new Date(slot.windowStart), 1, 0]).catch(this.#onError);
  }

  /**
   * After a request counted one by one in the database (the minute at `hits`): a key this replica
   * counted `BUSY_COUNTS` times within the settle period gets a chunk reserved. A quieter key keeps
   * its one write per request; a chunk would cost it two writes and mostly go back unused.
   */
  counted(bucket: string, windowStart: number, limit: number, hits: number): void {
    const now = Date.now();
    if (now - this.#recentSince >= SLOT_SETTLE_MS) {
      this.#recent.clear();
      this.#recentSince = now;
    }
    const recent = (this.#recent.get(bucket) ?? 0) + 1;
    this.#recent.set(bucket, recent);
    if (recent >= BUSY_COUNTS) this.reserve(bucket, windowStart, limit, hits);
  }

  /**
   * Reserves a chunk in the background when the minute is far from its limit and none is being
   * reserved already.
   */
  reserve(bucket: string, windowStart: number, limit: number, hits: number): void {
    this.#reserve(bucket, windowStart, limit, hits, undefined);
  }

  /**
   * With `settling` (a renewal), the ended chunk's settlement goes in the same statement; true when
   * it did (false: the caller settles it alone, no chunk being reserved).
   */
  #reserve(bucket: string, windowStart: number, limit: number, hits: number, settling: { unused: number; size: number } | undefined): boolean {
    const size = Math.min(SLOT_CHUNK, Math.floor((limit - hits) / CHUNK_HEADROOM));
    if (size < SLOT_CHUNK_MIN) return false;
    let slots = this.#buckets.get(bucket);
    if (slots?.reserving) return false;
    if (!slots) {
      slots = { chunks: [], reserving: undefined };
      this.#buckets.set(bucket, slots);
    }
    const held = slots;
    const reserved = settling
      ? queryPrepared<{ hits: string; size: string }>(this.#sequelize, SETTLE_AND_RESERVE, [
          bucket,
          new Date(windowStart),
          settling.unused,
          settling.size,
          limit,
          size,
          CHUNK_HEADROOM / 2,
        ]).then((rows) => rows.filter((row) => Number(row.size) > 0))
      : queryPrepared<{ hits: string }>(this.#sequelize, RESERVE, [bucket, new Date(windowStart), size, limit, CHUNK_HEADROOM / 2]);
    held.reserving = reserved
      .then(([row]) => {
        if (!row) return;
        const last = Number(row.hits);
        const chunk: Chunk = { windowStart, limit, size, next: last - size + 1, last, timer: undefined as never };
        chunk.timer = setTimeout(() => this.#settle(bucket, chunk, true), SLOT_SETTLE_MS).unref();
        held.chunks.push(chunk);
      })
      .catch(this.#onError)
      .finally(() => {
        held.reserving = undefined;
        if (held.chunks.length === 0 && this.#buckets.get(bucket) === held) this.#buckets.delete(bucket);
      });
    return true;
  }

  /** Gives back every slot this replica holds (a closing server): no chunk is renewed. */
  async close(): Promise<void> {
    const settling: Promise<unknown>[] = [];
    for (const [bucket, slots] of this.#buckets) for (const chunk of [...slots.chunks]) settling.push(this.#settle(bucket, chunk));
    await Promise.all(settling);
  }

  #held(slots: BucketSlots): number {
    let held = 0;
    for (const chunk of slots.chunks) held += chunk.last - chunk.next + 1;
    return held;
  }

  /**
   * With `renew` (its period ended), a chunk its requests took from is followed by the next at
   * once: the key is still busy, and without it the key's next requests would each be counted in
   * the database until it was found busy again. One the key did not take from ends the chain, so
   * a key gone quiet holds no slots after two settle periods.
   */
  #settle(bucket: string, chunk: Chunk, renew = false): Promise<unknown> {
    clearTimeout(chunk.timer);
    const slots = this.#buckets.get(bucket);
    const index = slots?.chunks.indexOf(chunk) ?? -1;
    if (index < 0) return Promise.resolve();
    const taken = chunk.next > chunk.last - chunk.size + 1;
    const unused = Math.max(0, chunk.last - chunk.next + 1);
    slots!.chunks.splice(index, 1);
    if (
      renew &&
      taken &&
      Date.now() - chunk.windowStart < MINUTE_MS &&
      this.#reserve(bucket, chunk.windowStart, chunk.limit, chunk.last, { unused, size: chunk.size })
    )
      return slots!.reserving!;
    if (slots!.chunks.length === 0 && !slots!.reserving) this.#buckets.delete(bucket);
    return queryPrepared(this.#sequelize, SETTLE, [bucket, new Date(chunk.windowStart), unused, chunk.size]).catch(this.#onError);
  }
}
