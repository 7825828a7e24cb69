import { PassThrough } from 'node:stream';
import type { SseMessage } from '@svc/schemas';

/** One server-sent event on the wire: `event:`, optional `id:`, JSON `data:`, blank line. */
export function encodeSse(message: SseMessage<unknown>): string {
  const lines = [`event: ${message.event}`];
  if (message.id !== undefined) lines.push(`id: ${message.id}`);
  lines.push(`data: ${JSON.stringify(message.data)}`);
  return `${lines.join('\n')}\n\n`;
}

/**
 * Pipes an async iterable of events into a stream. When the client goes away the iterator
 * is returned early (so the producer can stop work); a producer error ends the stream with
 * an `error` event carrying a stable code, never a stack.
 */
export function sseStream(events: AsyncIterable<SseMessage<unknown>>, signal: AbortSignal, onError: (error: unknown) => { code: string; error: string }, shutdown?: AbortSignal): PassThrough {
  const stream = new PassThrough();
  const iterator = events[Symbol.asyncIterator]();
  const stop = () => void iterator.return?.();
  signal.addEventListener('abort', stop, { once: true });
  // A shutdown must not wait for a long stream: the client gets one last event saying why the
  // stream ends and that it may reconnect (to another replica), then the stream closes.
  let goingAway = false;
  const endForShutdown = () => {
    goingAway = true;
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
        if (!stream.write(encodeSse(next.value))) await new Promise((resolve) => stream.once('drain', resolve));
      }
    } catch (error) {
      if (!goingAway) stream.write(encodeSse({ event: 'error', data: onError(error) }));
    } finally {
      signal.removeEventListener('abort', stop);
      shutdown?.removeEventListener('abort', endForShutdown);
      if (!goingAway) stream.end();
    }
  })();
  return stream;
}
