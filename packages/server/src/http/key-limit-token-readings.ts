/** A key that read its minute's tokens this many times within a reading's life is busy: its reading is shared. */
export const BUSY_READS = 4;
/** A shared reading serves this long after it was sent, no longer: the staleness a busy key's check may have. */
export const READING_MS = 100;

interface Reading {
  windowStart: number;
  /** When its read was sent. */
  at: number;
  amount: Promise<number>;
  /** The amount once read. */
  value: number | undefined;
  /** Requests it served besides the one that read it: one that served none is not renewed. */
  uses: number;
}

interface BucketReadings {
  current: Reading | undefined;
  /** The next reading, sent in the background once the current one is three quarters of its life old. */
  next: Reading | undefined;
}

/**
 * The minute's tokens read for the check before a request (docs/limits.md, "Places and tokens in
 * chunks"), shared by a busy key's requests that find no open chunk: a key calling a route that
 * reserves no tokens (`GET /v1/models`) never has one, and without this each of its requests read
 * the row. A key that read `BUSY_READS` times within `READING_MS` on this replica keeps its last
 * reading for `READING_MS` after it was sent; while its requests use it, the next is read in the
 * background from three quarters of that age, so they do not wait for it. The check only refuses a key whose
 * minute is full: a reading that says so is read again, and tokens are still reserved by each
 * inference call in the row or a chunk, so the minute's bound is unchanged; a request may pass
 * the check up to `READING_MS` after another replica's calls filled the minute. This replica's
 * own writes to the row drop its readings (`writing`).
 */
export class TokenReadings {
  readonly #read: (bucket: string, windowStart: number) => Promise<number>;
  readonly #buckets = new Map<string, BucketReadings>();
  /** Reads per bucket since `#recentSince` (at most `READING_MS` ago). */
  readonly #recent = new Map<string, number>();
  #recentSince = 0;

  constructor(read: (bucket: string, windowStart: number) => Promise<number>) {
    this.#read = read;
  }

  /**
   * The minute's tokens used so far: a busy key's reading with room, sent within `READING_MS`
   * (a number, no promise), else one being read or a read of its own.
   */
  used(bucket: string, windowStart: number, limit: number, now: number): number | Promise<number> {
    const readings = this.#buckets.get(bucket);
    if (readings?.next?.value !== undefined) {
      readings.current = readings.next;
      readings.next = undefined;
    }
    const current = readings?.current;
    const fresh = current !== undefined && current.windowStart === windowStart && now - current.at < READING_MS;
    if (fresh && current.value !== undefined && current.value < limit) {
      current.uses++;
      if (readings!.next === undefined && now - current.at >= (READING_MS * 3) / 4) readings!.next = this.#reading(bucket, readings!, windowStart, now);
      return current.value;
    }
    if (fresh && current.value === undefined) {
      current.uses++;
      return current.amount.then((amount) => (amount < limit ? amount : this.#read(bucket, windowStart)));
    }
    const renew = current !== undefined && current.uses > 0;
    if (!this.#busy(bucket, now) && !renew) {
      if (readings) this.#buckets.delete(bucket);
      return this.#read(bucket, windowStart);
    }
    const held = readings ?? { current: undefined, next: undefined };
    this.#buckets.set(bucket, held);
    held.current = this.#reading(bucket, held, windowStart, now);
    held.next = undefined;
    return held.current.amount;
  }

  /**
   * This replica writes the bucket's row (a reservation, a settlement): its readings are stale,
   * and so is one read while the write was on its way, dropped again once it ended.
   */
  writing<T>(bucket: string, write: Promise<T>): Promise<T> {
    this.#buckets.delete(bucket);
    const forget = () => this.#buckets.delete(bucket);
    write.then(forget, forget);
    return write;
  }

  /** A read of the row kept as a reading of `readings`; a failed one is dropped (the next request reads on its own). */
  #reading(bucket: string, readings: BucketReadings, windowStart: number, now: number): Reading {
    const reading: Reading = { windowStart, at: now, amount: this.#read(bucket, windowStart), value: undefined, uses: 0 };
    reading.amount.then(
      (amount) => {
        reading.value = amount;
      },
      () => {
        if (readings.current === reading) readings.current = undefined;
        if (readings.next === reading) readings.next = undefined;
      },
    );
    return reading;
  }

  #busy(bucket: string, now: number): boolean {
    if (now - this.#recentSince >= READING_MS) {
      this.#recent.clear();
      this.#recentSince = now;
      // A key gone quiet keeps no reading.
      for (const [key, readings] of this.#buckets) if (!readings.current || now - readings.current.at >= 2 * READING_MS) this.#buckets.delete(key);
    }
    const recent = (this.#recent.get(bucket) ?? 0) + 1;
    this.#recent.set(bucket, recent);
    return recent >= BUSY_READS;
  }
}
