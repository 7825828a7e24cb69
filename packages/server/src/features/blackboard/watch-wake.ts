/** The PostgreSQL channel a committed put batch notifies (`svc_blackboard_put_batch`'s statement), naming its channel keys. */
export const BOARD_POSTS_CHANNEL = 'svc_board_posts';

/** A NOTIFY payload stays under PostgreSQL's 8000 bytes; a batch naming more keys than fit wakes every watcher. */
const PAYLOAD_MAX_BYTES = 7_000;
const EVERY_KEY = '*';

/** The payload a batch's NOTIFY carries: its channel keys as JSON, or `*` when they do not fit. */
export function wakePayload(keys: readonly string[]): string {
  const json = JSON.stringify([...new Set(keys)]);
  return Buffer.byteLength(json) <= PAYLOAD_MAX_BYTES ? json : EVERY_KEY;
}

/** The keys a payload names, or undefined for every key (`*`, or a payload this version cannot read). */
export function keysOfPayload(payload: string): string[] | undefined {
  if (payload === EVERY_KEY) return undefined;
  try {
    const keys = JSON.parse(payload) as unknown;
    return Array.isArray(keys) && keys.every((key) => typeof key === 'string') ? keys : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Who waits for new posts of which channel, in this process. Puts stored here wake them at once;
 * on PostgreSQL the NOTIFY of every replica's batches wakes them too. A wake-up only says "read
 * again": the stream's read decides what is new, so a wake-up twice or a spurious one costs a read.
 */
export class BoardWake {
  readonly #waiters = new Map<string, Set<() => void>>();

  /** Calls `wake` on each new post of `key` until the returned function is called. */
  subscribe(key: string, wake: () => void): () => void {
    let set = this.#waiters.get(key);
    if (!set) this.#waiters.set(key, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (set.size === 0 && this.#waiters.get(key) === set) this.#waiters.delete(key);
    };
  }

  /** Wakes the waiters of these keys; undefined wakes everyone (a payload too large to name its keys, a lost listener). */
  wake(keys: readonly string[] | undefined): void {
    if (keys === undefined) {
      for (const set of this.#waiters.values()) for (const wake of set) wake();
      return;
    }
    for (const key of new Set(keys)) for (const wake of this.#waiters.get(key) ?? []) wake();
  }
}
