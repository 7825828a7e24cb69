/** A key that read its minute's tokens this many times within a reading's life is busy: its reading is shared. */
export const BUSY_READS = 4;
/** A shared reading serves this long after it was sent, no longer: the staleness a busy key's check may have. */
export const READING_MS = 100;

interface Reading {
  windowStart: number;
  /** When its read was sent. */
  at: number;
  amount: Promise<number>;
  /** Requests it served besides the one that read it: one that served none is not renewed. */
  uses: number;
}

/**
 * The minute's tokens read for the check before a request (docs/limits.md, "Places and tokens in
 * chunks"), shared by a busy key's requests that find no open chunk: a key calling a route that
 * reserves no tokens (`GET /v1/models`) never has one, and without this each of its requests read
 * the row. A key that read `BUSY_READS` times within `READING_MS` on this replica keeps its last
 * reading for `READING_MS`, and while its requests use it each reading is followed by the next.
 * The check only refuses a key whose minute is full: a reading that says so is read again, and
 * tokens are still reserved by each inference call in the row or a chunk, so the minute's bound
 * is unchanged; a request may pass the check up to `READING_MS` after another replica's calls
 * filled the minute. This replica's own writes to the row drop its reading (`writing`).
 */
export class TokenReadings {
  readonly #readings = new Map<string, Reading>();
  /** Reads per bucket since `#recentSince` (at most `READING_MS` ago). */
  readonly #recent = new Map<string, number>();
  #recentSince = 0;

  /** The minute's tokens used so far: a busy key's fresh reading with room, else `read()`. */
  async used(bucket: string, windowStart: number, limit: number, read: () => Promise<number>): Promise<number> {
    const now = Date.now();
    const reading = this.#readings.get(bucket);
    const fresh = reading !== undefined && reading.windowStart === windowStart && now - reading.at < READING_MS;
    if (fresh) {
      reading.uses++;
      const amount = await reading.amount;
      if (amount < limit) return amount;
    }
    const renew = reading !== undefined && reading.uses > 0;
    const amount = read();
    if (this.#busy(bucket, now) || renew) {
      const next: Reading = { windowStart, at: now, amount, uses: 0 };
      this.#readings.set(bucket, next);
      amount.catch(() => {
        if (this.#readings.get(bucket) === next) this.#readings.delete(bucket);
      });
    } else if (reading && !fresh) this.#readings.delete(bucket);
    return amount;
  }

  /**
   * This replica writes the bucket's row (a reservation, a settlement): its reading is stale, and so
   * is one read while the write was on its way, dropped again once it ended.
   */
  writing<T>(bucket: string, write: Promise<T>): Promise<T> {
    this.#readings.delete(bucket);
    const forget = () => this.#readings.delete(bucket);
    write.then(forget, forget);
    return write;
  }

  #busy(bucket: string, now: number): boolean {
    if (now - this.#recentSince >= READING_MS) {
      this.#recent.clear();
      this.#recentSince = now;
      // A key gone quiet keeps no reading.
      for (const [key, reading] of this.#readings) if (now - reading.at >= 2 * READING_MS) this.#readings.delete(key);
    }
    const recent = (this.#recent.get(bucket) ?? 0) + 1;
    this.#recent.set(bucket, recent);
    return recent >= BUSY_READS;
  }
}
