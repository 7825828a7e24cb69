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
