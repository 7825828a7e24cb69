/** One answer held in memory: the version of the database row it is the body of, and its bytes. */
export interface HeldAnswer {
  version: string;
  bytes: Buffer;
}

/**
 * The bodies of recent response-cache entries, in this process's memory, least recently used
 * first out once their bytes pass `maxBytes`. Never an answer on its own: a hit still reads the
 * entry's row (is it live, and which version), and the held bytes are sent only when the row's
 * version is the one held. So purges, TTLs and caps, whichever replica caused them, hold exactly
 * as without it; what it saves is reading, sending and decoding the body for every hit.
 */
export class ResponseCacheFront {
  private readonly maxBytes: number;
  /** Map order is use order: the first key is the least recently used. */
  private readonly held = new Map<string, HeldAnswer>();
  private bytes = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get(key: string): HeldAnswer | undefined {
    const answer = this.held.get(key);
    if (answer !== undefined) {
      this.held.delete(key);
      this.held.set(key, answer);
    }
    return answer;
  }

  set(key: string, answer: HeldAnswer): void {
    this.delete(key);
    if (answer.bytes.length > this.maxBytes) return;
    this.held.set(key, answer);
    this.bytes += answer.bytes.length;
    for (const [oldest, { bytes }] of this.held) {
      if (this.bytes <= this.maxBytes) break;
      this.held.delete(oldest);
      this.bytes -= bytes.length;
    }
  }

  delete(key: string): void {
    const answer = this.held.get(key);
    if (answer === undefined) return;
    this.held.delete(key);
    this.bytes -= answer.bytes.length;
  }

  clear(): void {
    this.held.clear();
    this.bytes = 0;
  }

  /** Bytes held now. */
  get size(): number {
    return this.bytes;
  }
}
