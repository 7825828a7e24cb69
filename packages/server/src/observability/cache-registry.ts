export interface CacheStats {
  entries: number;
  max_entries: number;
  hits: number;
  misses: number;
  /** Where the cache knows them: the bytes it holds, how long an entry lives, and whether replicas share it. */
  bytes?: number;
  ttl_seconds?: number;
  shared?: boolean;
  /** Where the entry is a worker pool: threads alive, starting, running a job, and jobs waiting for one. */
  workers?: { threads: number; starting: number; busy: number; waiting: number };
}

/** What a purge removed. */
export interface PurgeResult {
  entries: number;
  bytes: number;
}

interface RegisteredCache {
  name: string;
  description: string;
  /** In-process caches answer at once; a cache in the database asks it. */
  stats(): CacheStats | Promise<CacheStats>;
  /** Present on caches that keep entries per principal: the part that is `owner`'s (see `list`). */
  statsFor?(owner: string): CacheStats | Promise<CacheStats>;
  /** Present on caches an operator may empty (the response cache); `model` narrows it to one model's entries. */
  purge?(options: { model?: string }): Promise<PurgeResult>;
}

/** Caches report here so `/v1/cache` shows what each holds and how well it serves. */
export class CacheRegistry {
  private readonly caches = new Map<string, RegisteredCache>();

  register(cache: RegisteredCache): void {
    this.caches.set(cache.name, cache);
  }

  /**
   * Every cache with its server-wide numbers (the operator's view); or, given `owner` (a principal
   * key), only the caches that keep entries per principal, each counting only what is that
   * principal's: another caller's entries and the server's load are not for it to see.
   */
  async list(owner?: string) {
    const caches = [...this.caches.values()].filter((cache) => owner === undefined || cache.statsFor !== undefined);
    return Promise.all(
      caches.map(async (cache) => {
        const stats = owner === undefined ? await cache.stats() : await cache.statsFor!(owner);
        const lookups = stats.hits + stats.misses;
        return {
          name: cache.name,
          description: cache.description,
          ...stats,
          hit_rate: lookups === 0 ? null : stats.hits / lookups,
          view: owner === undefined ? ('server' as const) : ('principal' as const),
        };
      }),
    );
  }

  /** Empties the named cache; undefined when no cache of that name can be purged. */
  async purge(name: string, options: { model?: string }): Promise<PurgeResult | undefined> {
    return this.caches.get(name)?.purge?.(options);
  }
}

/** A small least-recently-used map that counts its hits and misses. */
export class CountingLru<K, V> {
  private readonly map = new Map<K, V>();
  hits = 0;
  misses = 0;

  readonly maxEntries: number;

  constructor(maxEntries: number) {
    this.maxEntries = maxEntries;
  }

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.maxEntries) this.map.delete(this.map.keys().next().value as K);
  }

  /** Drops the entry of `key` if it is still `value` (a failed build, so the next reader starts another). */
  deleteIf(key: K, value: V): void {
    if (this.map.get(key) === value) this.map.delete(key);
  }

  stats(): CacheStats {
    return { entries: this.map.size, max_entries: this.maxEntries, hits: this.hits, misses: this.misses };
  }
}
