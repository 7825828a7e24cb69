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

/**
 * Pipes an async iterable of events into a stream. When the client goes away the iterator
 * is returned early (so the producer can stop work); a producer error ends the stream with
 * an `error` event carrying a stable code, never a stack.
 */
export function sseStream(events: AsyncIterable<SseMessage<unknown>>, signal: AbortSignal, onError: (error: unknown) => { code: string; error: string }): PassThrough {
  const stream = new PassThrough();
  const iterator = events[Symbol.asyncIterator]();
  const stop = () => void iterator.return?.();
  signal.addEventListener('abort', stop, { once: true });
  void (async () => {
    try {
      while (!signal.aborted) {
        const next = await iterator.next();
        if (next.done) break;
        if (!stream.write(encodeSse(next.value))) await new Promise((resolve) => stream.once('drain', resolve));
      }
    } catch (error) {
      stream.write(encodeSse({ event: 'error', data: onError(error) }));
    } finally {
      signal.removeEventListener('abort', stop);
      stream.end();
    }
  })();
  return stream;
}
