import type { ServerResponse } from 'node:http';
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

/**
 * Writes an async iterable of events to a response as they come, straight to the socket's
 * response rather than through a stream Koa pipes (one hop less per event: bench/chat-proxy).
 * Starts on the next tick, once the request's own bookkeeping (latency headers, the log line)
 * has run. When the client goes away the iterator is returned early (so the producer can stop
 * work); a producer error ends the stream with an `error` event carrying a stable code, never a
 * stack. A silence of `keepAliveMs` or more is filled with a keep-alive comment (one timer per
 * stream, checked every half period).
 */
export function writeSse(response: ServerResponse, events: AsyncIterable<SseMessage<unknown>>, signal: AbortSignal, onError: (error: unknown) => { code: string; error: string }, keepAliveMs?: number): void {
  const iterator = events[Symbol.asyncIterator]();
  const stop = () => void iterator.return?.();
  signal.addEventListener('abort', stop, { once: true });
  // A write to a connection that just closed reports an error the abort signal already handles.
  response.on('error', () => {});
  let lastWrite = performance.now();
  const write = (text: string): boolean => {
    lastWrite = performance.now();
    return response.write(text);
  };
  const keepAlive =
    keepAliveMs === undefined
      ? undefined
      : setInterval(() => {
          if (performance.now() - lastWrite >= keepAliveMs && !response.writableEnded) write(SSE_KEEP_ALIVE);
        }, Math.max(5, keepAliveMs / 2));
  process.nextTick(async () => {
    try {
      while (!signal.aborted) {
        const next = await iterator.next();
        if (next.done) break;
        if (!write(encodeSse(next.value)) && !signal.aborted) await drained(response);
      }
    } catch (error) {
      if (!signal.aborted) write(encodeSse({ event: 'error', data: onError(error) }));
    } finally {
      clearInterval(keepAlive);
      signal.removeEventListener('abort', stop);
      response.end();
    }
  });
}

/** Resolves when the response can take more, or is gone. */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
