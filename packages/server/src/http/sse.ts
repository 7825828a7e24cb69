import type { ServerResponse } from 'node:http';
import type { SseMessage } from '@svc/schemas';

const wireJson = Symbol('svc.wireJson');

/**
 * Gives an event's datum the JSON text it goes out as: a proxied event svc did not change (an
 * upstream's chat chunk) is written as it came, not serialised a second time. The text must be
 * one line of JSON equal to `data`, so mark only data that is final: the mark is an own symbol
 * property (a plain assignment, about a tenth of `defineProperty`'s cost), which a spread copy
 * keeps, so data that is to be changed must not be marked.
 */
export function withWireJson<T extends object>(data: T, json: string): T {
  (data as { [wireJson]?: string })[wireJson] = json;
  return data;
}

/**
 * One server-sent event on the wire: `event:`, optional `id:`, `data:`, blank line. The default
 * event name `message` is left implicit (OpenAI's data-only streams), and a string datum of one
 * line is written as it is (`data: [DONE]`); everything else is JSON.
 */
export function encodeSse(message: SseMessage<unknown>): string {
  const { data } = message;
  const line = typeof data === 'string' && !/[\r\n]/.test(data) ? data : ((data as { [wireJson]?: string } | null)?.[wireJson] ?? JSON.stringify(data));
  if (message.event === 'message' && message.id === undefined) return `data: ${line}\n\n`;
  return `${message.event === 'message' ? '' : `event: ${message.event}\n`}${message.id === undefined ? '' : `id: ${message.id}\n`}data: ${line}\n\n`;
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
 * Writes an async iterable of events to a response, straight to Node's ServerResponse: no
 * Readable, no `stream.pipeline` between (Koa pipes a stream body through one, which costs an
 * AbortController, a DOMException and end-of-stream listeners per stream; bench/chat-proxy).
 * The caller has set the status and headers and told Koa to leave the response alone
 * (`ctx.respond = false`); the headers go out with the first event.
 *
 * When the client goes away the iterator is returned early (so the producer can stop work); a
 * producer error ends the stream with an `error` event carrying a stable code, never a stack.
 * An event is written the moment the producer yields it; the loop waits only when the socket
 * is not taking more (backpressure: `write` answered false, until `drain`).
 */
export function writeSse(
  res: ServerResponse,
  events: AsyncIterable<SseMessage<unknown>>,
  signal: AbortSignal,
  onError: (error: unknown) => { code: string; error: string },
  options: SseStreamOptions = {},
): void {
  const { keepAliveMs, shutdown } = options;
  /** Set once the response is ended, or closed under us: nothing more is written. */
  let finished = false;
  /** Resolves the loop's wait for the socket to take more (`drain`), or for the response's end. */
  let wantsMore: (() => void) | undefined;
  const resume = () => {
    wantsMore?.();
    wantsMore = undefined;
  };
  const finish = (last?: string) => {
    if (finished) return;
    finished = true;
    if (last === undefined) res.end();
    else res.end(last);
    resume();
  };
  const closed = () => {
    finished = true;
    resume();
  };
  res.on('drain', resume);
  res.once('close', closed);
  const iterator = events[Symbol.asyncIterator]();
  const stop = () => void iterator.return?.();
  signal.addEventListener('abort', stop, { once: true });
  let lastWrite = performance.now();
  const keepAlive =
    keepAliveMs === undefined
      ? undefined
      : setInterval(
          () => {
            // A client not taking what is queued needs no keep-alive: it would only grow the buffer
            // (the stall deadline, SVC_HTTP_RESPONSE_STALL_MS, ends such a connection).
            if (performance.now() - lastWrite < keepAliveMs || finished || res.writableNeedDrain) return;
            lastWrite = performance.now();
            res.write(SSE_KEEP_ALIVE);
          },
          Math.max(5, keepAliveMs / 2),
        );
  // A shutdown must not wait for a long stream: the client gets one last event saying why the
  // stream ends and that it may reconnect (to another replica), then the stream closes.
  const endForShutdown = () => {
    clearInterval(keepAlive);
    finish(
      encodeSse({
        event: 'error',
        data: { code: 'server_shutting_down', error: 'The server is shutting down; reconnect and retry (another replica will answer).', retryable: true },
      }),
    );
    stop();
  };
  if (shutdown?.aborted) endForShutdown();
  else shutdown?.addEventListener('abort', endForShutdown, { once: true });
  void (async () => {
    try {
      while (!signal.aborted && !finished) {
        const next = await iterator.next();
        if (next.done || finished) break;
        lastWrite = performance.now();
        if (!res.write(encodeSse(next.value)) && !finished) await new Promise<void>((resolve) => (wantsMore = resolve));
      }
    } catch (error) {
      if (!finished) finish(encodeSse({ event: 'error', data: onError(error) }));
    } finally {
      clearInterval(keepAlive);
      signal.removeEventListener('abort', stop);
      shutdown?.removeEventListener('abort', endForShutdown);
      res.off('drain', resume);
      res.off('close', closed);
      finish();
    }
  })();
}
