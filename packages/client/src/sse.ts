import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { SseMessage } from '@svc/schemas';

/**
 * Reads a server-sent event stream as an async iterable of `{ event, data, id }` with JSON data.
 * Single use; breaking out of the loop cancels the body and aborts the request.
 */
export async function* readSse<T>(response: Response, abort: () => void): AsyncGenerator<SseMessage<T>> {
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  let finished = false;
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      yield { event: value.event ?? 'message', data: JSON.parse(value.data) as T, ...(value.id ? { id: value.id } : {}) };
    }
  } finally {
    if (!finished) {
      abort();
      await reader.cancel().catch(() => {});
    }
  }
}
