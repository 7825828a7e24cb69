import { watchEventId, type BlackboardRecord, type BlackboardWatchEvent } from '@svc/schemas/blackboard';
import type { SseMessage } from '@svc/schemas/core';
import { ClientError, RateLimitError, SvcError } from '../errors.ts';
import { retryAfterMs, type CallOptions } from '../transport.ts';

/** Waits before each reconnect in a row, in ms; the last repeats. A stream that starts again resets it. */
export const DEFAULT_RECONNECT_MS: readonly number[] = [250, 500, 1_000, 2_000, 5_000, 10_000];

export interface ChannelStreamOptions {
  key: string;
  signal?: AbortSignal;
  /** Resume right after this cursor (a saved `onCursor` value, or a page's `poll_next`) instead of from now. */
  since?: { since: string; since_id?: string | null };
  /** Told the cursor when the stream starts and after each post: save it to resume later with `since`. */
  onCursor?: (cursor: { since: string; since_id: string | null }) => void;
  /** Waits between reconnects in ms (default 250 ms doubling to 10 s, with upward jitter of a fifth); injectable for tests. */
  reconnectMs?: readonly number[];
  /** Told each failure the watch rides out (a restart, a 5xx, a 429) and how long it waits before reconnecting. */
  onReconnect?: (error: unknown, waitMs: number) => void;
}

type OpenStream = (
  request: { query: { key: string }; headers: { 'last-event-id'?: string } },
  options: CallOptions,
) => Promise<AsyncIterable<SseMessage<BlackboardWatchEvent>>>;

/** A failure the watch waits out: the server restarting or unreachable, a 5xx, a 429, a stream cut mid-way. A 4xx but 429 is the caller's to fix. */
function reconnectable(error: unknown): boolean {
  if (error instanceof RateLimitError) return true;
  if (SvcError.isInstance(error)) return !(error instanceof ClientError) && error.status !== 501;
  return true;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * A channel's new posts from its push stream (`GET /api/v1/blackboard/watch`). The cursor of
 * the last event (a post's, or the starting point's) goes back as `Last-Event-ID` on every
 * reconnect, so a restart, a 5xx or a cut connection loses and repeats no post. Reconnects back
 * off (250 ms doubling to 10 s, or the server's Retry-After) until the stream starts again.
 */
export async function* watchChannelStream(open: OpenStream, options: ChannelStreamOptions): AsyncGenerator<BlackboardRecord, void, undefined> {
  const { key, signal } = options;
  const schedule = options.reconnectMs && options.reconnectMs.length > 0 ? options.reconnectMs : DEFAULT_RECONNECT_MS;
  let lastId = options.since ? watchEventId(options.since) : undefined;
  let failures = 0;
  while (!signal?.aborted) {
    let failure: unknown;
    try {
      const events = await open({ query: { key }, headers: lastId === undefined ? {} : { 'last-event-id': lastId } }, { signal, retry: 0 });
      for await (const event of events) {
        if (event.event === 'watch-started') {
          failures = 0;
          lastId = event.id ?? lastId;
          const data = event.data as { since: string; since_id: string | null };
          options.onCursor?.({ since: data.since, since_id: data.since_id });
        } else if (event.event === 'post-created') {
          const post = event.data as BlackboardRecord;
          lastId = event.id ?? watchEventId({ since: post.created_at, since_id: post.id });
          options.onCursor?.({ since: post.created_at, since_id: post.id });
          yield post;
        } else if (event.event === 'error') {
          // The server is stopping (or the stream failed there): reconnect, to it or another replica.
          failure = event.data;
          break;
        }
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (!reconnectable(error)) throw error;
      failure = error;
    }
    if (signal?.aborted) return;
    const step = schedule[Math.min(failures, schedule.length - 1)]!;
    failures += 1;
    const told = SvcError.isInstance(failure) && failure.headers ? retryAfterMs(failure.headers) : undefined;
    const wait = told ?? step + Math.random() * 0.2 * step;
    options.onReconnect?.(failure, wait);
    await sleep(wait, signal);
  }
}
