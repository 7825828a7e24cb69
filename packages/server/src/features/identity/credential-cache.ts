/** The PostgreSQL channel a change to a credential (a key revoked, rotated or re-limited, an OAuth family or token revoked) is announced on. */
export const CREDENTIALS_CHANNEL = 'svc_credentials';

/** The statement that announces a change, run inside the changing transaction: delivered only when it commits. */
export const NOTIFY_CREDENTIALS_SQL = `SELECT pg_notify('${CREDENTIALS_CHANNEL}', '')`;

interface Entry<T> {
  value: T;
  expiresAt: number;
  /** From then on, the first call that finds it reads it again in the background (`refresh`). */
  refreshAt: number;
  refreshing: boolean;
}

/**
 * Verified credentials kept in memory, keyed by the SHA-256 of the secret (never the secret), so a
 * keyed call resolves without a database round trip (docs/identity.md, "Credential cache").
 * Bounded three ways: at most `maxEntries` (the oldest goes first), each at most `ttlMs` old (the
 * backstop for a notification that never came), and only while `trusted()` (the replica hears
 * changes: its listening connection is up, or it is alone on an embedded database). Any change
 * empties it (`clear`): changes are rare, and a full flush cannot miss the entry a change touched.
 */
export class CredentialCache<T> {
  readonly #entries = new Map<string, Entry<T>>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #trusted: () => boolean;
  /** Bumped by every clear: a lookup begun before a change must not store what it read (`generation`, `set`). */
  #generation = 0;

  constructor(options: { ttlMs: number; maxEntries: number; trusted: () => boolean }) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries;
    this.#trusted = options.trusted;
  }

  get generation(): number {
    return this.#generation;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(hash: string, now = Date.now()): T | undefined {
    if (this.#ttlMs === 0 || !this.#trusted()) return undefined;
    const entry = this.#entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt > now) return entry.value;
    this.#entries.delete(hash);
    return undefined;
  }

  /**
   * Keeps a value verified by a lookup that began at `generation`, for the TTL or until
   * `notAfter` (a token's own expiry), whichever is sooner. A change since then drops it.
   */
  set(hash: string, value: T, generation: number, notAfter = Number.POSITIVE_INFINITY): void {
    if (this.#ttlMs === 0 || generation !== this.#generation || !this.#trusted()) return;
    this.#entries.delete(hash);
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
    const now = Date.now();
    this.#entries.set(hash, { value, expiresAt: Math.min(now + this.#ttlMs, notAfter), refreshAt: now + this.#ttlMs / 2, refreshing: false });
  }

  /**
   * Past half its TTL, a copy in use is read again once, in the background, while it still
   * serves: a busy credential is never found expired by the many calls in flight at once (each
   * would read it, on the request path), and its reads are one per half TTL. What the read finds
   * replaces the copy (`load` answers undefined: gone, revoked or changed, so the next call looks
   * it up); a change announced meanwhile wins. A failed read leaves the copy to expire.
   */
  refresh(hash: string, load: () => Promise<{ value: T; notAfter?: number } | undefined>, now = Date.now()): void {
    const entry = this.#entries.get(hash);
    if (!entry || entry.refreshing || now < entry.refreshAt) return;
    entry.refreshing = true;
    const generation = this.#generation;
    load().then(
      (found) => {
        if (generation !== this.#generation) return;
        if (found) this.set(hash, found.value, generation, found.notAfter);
        else this.#entries.delete(hash);
      },
      () => {},
    );
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }
}
