import type { EntryStanding } from './response-cache-store.ts';

/** One answer held in memory: where the database row it is the body of stood when last seen, and its bytes. */
export interface HeldAnswer {
  standing: EntryStanding;
  bytes: Buffer;
  /** Until when (performance.now()) the standing may be trusted without reading the row again. */
  trustedUntil: number;
}

/**
 * The bodies of recent response-cache entries, in this process's memory, least recently used
 * first out once their bytes pass `maxBytes`. How a hit may use one is ResponseCache's rule (by
 * the standing held while it is trusted, else after reading the row's standing).
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
