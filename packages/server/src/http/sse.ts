import { PassThrough } from 'node:stream';
import type { SseMessage } from '@svc/schemas';

/**
 * One server-sent event on the wire: `event:`, optional `id:`, `data:`, blank line. The default
 * event name `message` is left implicit (OpenAI's data-only streams), and a string datum of one
 * line is written as it is (`data: [DONE]`); everything else is JSON.
 */
export function encodeSse(message: SseMessage<unknown>): string {
  const lines = message.event === 'message' ? [] : [`event: ${message.event}`];
  if (message.id !== undefined) lines.push(`id: ${message.id}`);
  const raw = typeof message.data === 'string' && !/[\r\n]/.test(message.data);
  lines.push(`data: ${raw ? (message.data as string) : JSON.stringify(message.data)}`);
  return `${lines.join('\n')}\n\n`;
}

/** The SSE comment written during silences, so proxies and clients do not take a quiet stream for a dead one. */
export const SSE_KEEP_ALIVE = ': keep-alive\n\n';

/** What may end or fill a stream besides its events. */
export interface SseStreamOptions {
  /** A silence this long is filled with a keep-alive comment (one timer per stream, checked every half period). */
  keepAliveMs?: number;
  /** Aborts when the server begins to drain: the stream ends with a final event saying so. */
  shutdown?: AbortSignal;
}

/**
 * Pipes an async iterable of events into a stream. When the client goes away the iterator
 * is returned early (so the producer can stop work); a producer error ends the stream with
 * an `error` event carrying a stable code, never a stack.
 */
export function sseStream(events: AsyncIterable<SseMessage<unknown>>, signal: AbortSignal, onError: (error: unknown) => { code: string; error: string }, options: SseStreamOptions = {}): PassThrough {
  const { keepAliveMs, shutdown } = options;
  const stream = new PassThrough();
  const iterator = events[Symbol.asyncIterator]();
  const stop = () => void iterator.return?.();
  signal.addEventListener('abort', stop, { once: true });
  let lastWrite = performance.now();
  const keepAlive =
    keepAliveMs === undefined
      ? undefined
      : setInterval(() => {
          if (performance.now() - lastWrite < keepAliveMs || stream.writableEnded) return;
          lastWrite = performance.now();
          stream.write(SSE_KEEP_ALIVE);
        }, Math.max(5, keepAliveMs / 2));
  // A shutdown must not wait for a long stream: the client gets one last event saying why the
  // stream ends and that it may reconnect (to another replica), then the stream closes.
  let goingAway = false;
  const endForShutdown = () => {
    goingAway = true;
    clearInterval(keepAlive);
    stream.write(encodeSse({ event: 'error', data: { code: 'server_shutting_down', error: 'The server is shutting down; reconnect and retry (another replica will answer).', retryable: true } }));
    stream.end();
    stop();
  };
  if (shutdown?.aborted) endForShutdown();
  else shutdown?.addEventListener('abort', endForShutdown, { once: true });
  void (async () => {
    try {
      while (!signal.aborted && !goingAway) {
        const next = await iterator.next();
        if (next.done || goingAway) break;
        lastWrite = performance.now();
        if (!stream.write(encodeSse(next.value))) await new Promise((resolve) => stream.once('drain', resolve));
      }
    } catch (error) {
      if (!goingAway) stream.write(encodeSse({ event: 'error', data: onError(error) }));
    } finally {
      clearInterval(keepAlive);
      signal.removeEventListener('abort', stop);
      shutdown?.removeEventListener('abort', endForShutdown);
      if (!goingAway) stream.end();
    }
  })();
  return stream;
}
