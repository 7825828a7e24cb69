export interface CacheStats {
  entries: number;
  max_entries: number;
  hits: number;
  misses: number;
}

interface RegisteredCache {
  name: string;
  description: string;
  stats(): CacheStats;
}

/** Caches report here so `/v1/cache` shows what each holds and how well it serves. */
export class CacheRegistry {
  private readonly caches = new Map<string, RegisteredCache>();

  register(cache: RegisteredCache): void {
    this.caches.set(cache.name, cache);
  }

  list() {
    return [...this.caches.values()].map((cache) => ({ name: cache.name, description: cache.description, ...cache.stats() }));
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
