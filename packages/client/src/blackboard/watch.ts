import type { BlackboardQueryRequest, BlackboardReadPage, BlackboardRecord } from '@svc/schemas';
import type { CallOptions } from '../transport.ts';

/** The spec's polling schedule: 5, 10, 20, then 30 s between empty polls. */
export const DEFAULT_WATCH_BACKOFF_MS: readonly number[] = [5_000, 10_000, 20_000, 30_000];
/** No poll comes sooner than this after the previous one. */
export const MIN_WATCH_DELAY_MS = 5_000;

export type WatchFilters = Omit<BlackboardQueryRequest, 'since' | 'since_id' | 'before' | 'before_id' | 'limit' | 'solution_scope'> & {
  solution_scope?: Exclude<BlackboardQueryRequest['solution_scope'], string>;
};

export interface WatchOptions {
  /** Watch one channel (uses `get`). */
  key?: string;
  /** Or watch across channels with query filters (uses `query`). */
  filters?: WatchFilters;
  /** Stops the watch: the iterator ends quietly. */
  signal?: AbortSignal;
  /** Resume after this cursor instead of from now. */
  since?: { since: string; since_id?: string | null };
  /** Page size of each poll (default 50). */
  limit?: number;
  /**
   * Waits between polls that found nothing, in ms; the last one repeats. Activity resets it
   * to the first. Injectable so tests run fast; defaults to 5, 10, 20, 30 s.
   */
  backoffMs?: readonly number[];
  /** Floor under every wait (default 5000 ms, the spec's "never sooner than 5 s"). */
  minDelayMs?: number;
  /** Extra random wait as a fraction of the step (default 0.2), so many watchers do not poll in step. */
  jitter?: number;
  /**
   * How to wait between polls (default: a timer that the signal cuts short). Tests pass one that
   * records the requested delays and resolves at once, so the real schedule runs in milliseconds.
   */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
  /** Called with each page, e.g. to persist `poll_next` for a later resume. */
  onPage?: (page: BlackboardReadPage) => void;
}

type Read = (arguments_: Record<string, unknown>, options: CallOptions) => Promise<BlackboardReadPage>;

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * New posts as they arrive: polls with `since`/`since_id` from `poll_next`, drains a backlog
 * page by page at once, and waits with jittered backoff (5, 10, 20, then 30 s; never less than
 * 5 s) when a poll finds nothing. Activity resets the backoff. Aborting the signal ends the loop.
 */
export async function* watchBlackboard(read: Read, options: WatchOptions): AsyncGenerator<BlackboardRecord, void, undefined> {
  const schedule = options.backoffMs && options.backoffMs.length > 0 ? options.backoffMs : DEFAULT_WATCH_BACKOFF_MS;
  const floor = options.minDelayMs ?? MIN_WATCH_DELAY_MS;
  const jitter = options.jitter ?? 0.2;
  const limit = options.limit ?? 50;
  const signal = options.signal;
  const base: Record<string, unknown> = options.key !== undefined ? { key: options.key } : { ...options.filters };
  const call = async (cursor: Record<string, unknown>) => {
    try {
      const page = await read({ ...base, ...cursor, limit }, { signal });
      options.onPage?.(page);
      return page;
    } catch (error) {
      if (signal?.aborted) return undefined;
      throw error;
    }
  };

  let cursor: Record<string, unknown>;
  if (options.since) {
    cursor = { since: options.since.since, ...(options.since.since_id ? { since_id: options.since.since_id } : {}) };
  } else {
    // The newest item (or the read-start anchor of an empty board) is where "new" begins.
    const anchor = await call({});
    if (!anchor) return;
    cursor = { since: anchor.poll_next!.since, ...(anchor.poll_next!.since_id ? { since_id: anchor.poll_next!.since_id } : {}) };
  }
  let step = 0;
  while (!signal?.aborted) {
    const wait = schedule[Math.min(step, schedule.length - 1)]!;
    await (options.sleep ?? sleep)(Math.max(floor, wait + Math.random() * jitter * wait), signal);
    if (signal?.aborted) return;
    let active = false;
    for (;;) {
      const page = await call(cursor);
      if (!page) return;
      for (const item of page.items) {
        if (signal?.aborted) return;
        yield item;
      }
      if (page.items.length > 0) active = true;
      const next = page.poll_next;
      if (next) cursor = { since: next.since, ...(next.since_id ? { since_id: next.since_id } : {}) };
      if (!page.has_more) break;
    }
    step = active ? 0 : step + 1;
  }
}
