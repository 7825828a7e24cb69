import { blackboardLimits, watchEventId, type BlackboardGetRequest, type BlackboardReadPage, type BlackboardWatchEvent, type SseMessage } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import type { BoardWake } from './watch-wake.ts';

export interface WatchCursor {
  since: string;
  since_id?: string;
}

/** Seconds a refused watch is told to wait: long enough for a stream to end, short enough for a reconnect loop. */
const RETRY_AFTER_SECONDS = 5;

/**
 * Counts the watch streams open, per client address and in all, and refuses one past either cap
 * before any work (429 for the address, 503 for the server, both with Retry-After). The address,
 * not a bearer, is the caller: the route is public, and an unverified bearer could be varied at will.
 */
export class WatchSlots {
  readonly #perCaller: number;
  readonly #max: number;
  readonly #byCaller = new Map<string, number>();
  #open = 0;

  constructor(limits: { perCaller: number; max: number }) {
    this.#perCaller = limits.perCaller;
    this.#max = limits.max;
  }

  get open(): number {
    return this.#open;
  }

  /** Holds a slot for `caller` and answers how to give it back (once), or throws the refusal. */
  take(caller: string): () => void {
    const held = this.#byCaller.get(caller) ?? 0;
    if (held >= this.#perCaller) {
      throw new ServiceError(
        'blackboard_watch_caller_limit',
        `This address already has ${held} watch streams open (the limit is ${this.#perCaller}); close one or retry later.`,
        { retryAfterSeconds: RETRY_AFTER_SECONDS, retryable: true },
      );
    }
    if (this.#open >= this.#max) {
      throw new ServiceError('blackboard_watch_server_full', `This server has ${this.#open} watch streams open, its limit; retry later.`, {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
        retryable: true,
      });
    }
    this.#byCaller.set(caller, held + 1);
    this.#open += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#open -= 1;
      const left = (this.#byCaller.get(caller) ?? 1) - 1;
      if (left === 0) this.#byCaller.delete(caller);
      else this.#byCaller.set(caller, left);
    };
  }
}

export interface WatchOptions {
  key: string;
  /** Where to start; undefined: after the channel's newest post (only posts made from now on). */
  from: WatchCursor | undefined;
  read: (request: BlackboardGetRequest) => Promise<BlackboardReadPage>;
  wake: BoardWake;
  /** The backstop: read again after this long without a wake-up. */
  pollMs: number;
  signal: AbortSignal;
}

/**
 * A channel's new posts as events: `watch-started` with the starting cursor, then `post-created`
 * per post, oldest first, each with its keyset cursor as id. Puts stamp created_at in commit
 * order (svc_blackboard_put_batch locks one counter row), so reading past the last cursor sent
 * never skips a post that commits later with an earlier stamp. Between reads the stream waits on
 * a promise (no timer but the backstop's, no loop): an idle stream costs the event loop nothing.
 */
export async function* watchPosts(options: WatchOptions): AsyncGenerator<SseMessage<BlackboardWatchEvent>> {
  const { key, read, wake, pollMs, signal } = options;
  let cursor = options.from ?? (await startingCursor(key, read));
  yield { event: 'watch-started', id: watchEventId(cursor), data: { since: cursor.since, since_id: cursor.since_id ?? null } };
  let dirty = true;
  let resolveWait: (() => void) | undefined;
  const nudge = () => {
    dirty = true;
    resolveWait?.();
  };
  const unsubscribe = wake.subscribe(key, nudge);
  signal.addEventListener('abort', nudge, { once: true });
  try {
    while (!signal.aborted) {
      if (!dirty) {
        await new Promise<void>((resolve) => {
          resolveWait = resolve;
          const backstop = setTimeout(resolve, pollMs).unref();
          resolveWait = () => {
            clearTimeout(backstop);
            resolve();
          };
        });
        resolveWait = undefined;
        if (signal.aborted) return;
      }
      dirty = false;
      // A wake-up during the read sets dirty again, so the loop reads once more rather than miss it.
      let more = true;
      while (more && !signal.aborted) {
        const page = await read({ key, since: cursor.since, since_id: cursor.since_id, limit: blackboardLimits.readLimitMax });
        for (const item of page.items) {
          cursor = { since: item.created_at, since_id: item.id };
          yield { event: 'post-created', id: watchEventId(cursor), data: item };
        }
        more = page.has_more;
      }
    }
  } finally {
    unsubscribe();
    signal.removeEventListener('abort', nudge);
  }
}

/** After the channel's newest live post; an empty channel anchors on the server's clock (a few seconds back, as a first get does). */
async function startingCursor(key: string, read: WatchOptions['read']): Promise<WatchCursor> {
  const page = await read({ key, limit: 1 });
  const poll = page.poll_next;
  if (!poll) throw new Error('a first read answered no poll cursor');
  return { since: poll.since, ...(poll.since_id ? { since_id: poll.since_id } : {}) };
}
