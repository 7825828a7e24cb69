import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { SseMessage } from '@svc/schemas';
import { withIdleTimeout } from './stream-idle.ts';

/**
 * Reads a server-sent event stream as an async iterable of `{ event, data, id }` with JSON data.
 * Single use; breaking out of the loop cancels the body and aborts the request. With
 * `idleTimeoutMs`, a stream that sends nothing that long (not even a keep-alive comment) and does
 * not close fails with StreamIdleTimeoutError (`stream_idle_timeout`) instead of waiting forever.
 */
export async function* readSse<T>(response: Response, abort: () => void, idleTimeoutMs?: number): AsyncGenerator<SseMessage<T>> {
  if (!response.body) return;
  // Timed on the raw bytes: the parser drops keep-alive comments, which still prove the server is there.
  const reader = withIdleTimeout(response.body, idleTimeoutMs, `the event stream from ${response.url || 'the server'}`)
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream())
    .getReader();
  let finished = false;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      // OpenAI-style streams end with the literal `[DONE]`, the one datum that is not JSON.
      const data = value.data === '[DONE]' ? value.data : JSON.parse(value.data);
      yield { event: value.event ?? 'message', data: data as T, ...(value.id ? { id: value.id } : {}) };
    }
  } finally {
    if (!finished) {
      abort();
      await reader.cancel().catch(() => {});
    }
  }
}
