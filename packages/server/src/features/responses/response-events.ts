import type { ChatStreamEvent, ResponseObject, ResponseStreamEvent, SseMessage } from '@svc/schemas';
import { isServiceError, ServiceError } from '../../service-error.ts';
import type { ChatStreamTranslator } from '../../inference/responses/index.ts';
import type { ResponsesUpstreamEvent } from '../../inference/provider.ts';

/*
 * The two streams of POST /v1/responses. Generator functions declared once, here: one made per
 * call would keep each request alive through young collections (docs/inference.md, "What the
 * young collections promote").
 */

/** Each event as OpenAI sends it: `event: <type>` and the event as data. */
function* asSse(events: ResponseStreamEvent[]): Generator<SseMessage<ResponseStreamEvent>> {
  for (const event of events) yield { event: event.type, data: event };
  events.length = 0;
}

/**
 * A chat stream (the chat route's own events, usage and failure handling included) translated to
 * the Responses events. The final response is kept (`persist`) before its terminal event is sent,
 * so a caller that continues at once with `previous_response_id` finds it on any replica.
 */
export async function* translatedEvents(
  chatEvents: AsyncIterable<SseMessage<ChatStreamEvent>>,
  translator: ChatStreamTranslator,
  persist: (response: ResponseObject) => Promise<void>,
): AsyncGenerator<SseMessage<ResponseStreamEvent>> {
  const events: ResponseStreamEvent[] = [];
  translator.start(events);
  yield* asSse(events);
  for await (const message of chatEvents) {
    const chunk = message.data;
    if (chunk === '[DONE]') break;
    if (chunk.error) {
      await persist(translator.fail(chunk.error.code, chunk.error.message, events));
      yield* asSse(events);
      return;
    }
    try {
      translator.chunk(chunk, events);
    } catch (error) {
      if (!isServiceError(error)) throw error;
      await persist(translator.fail(error.code, error.message, events));
      yield* asSse(events);
      return;
    }
    yield* asSse(events);
  }
  await persist(translator.finish(events));
  yield* asSse(events);
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** How svc names a passed-through response: its own id, public model id and store settings, in place of the upstream's. */
export type ResponseRename = (response: Record<string, unknown>) => ResponseObject;

/**
 * An upstream's Responses events passed on with svc's names in each response snapshot. A failure
 * after the start (the upstream broke off, sent an `error` event, or ended before a final event)
 * ends the stream with `response.failed` carrying the code, numbered after the last event.
 * `onEnd` gets the final response (or none, when the client left) however the stream ends; a
 * failure after the final event was kept is the connection's, and ends the stream quietly.
 */
export async function* passedThroughEvents(
  upstreamEvents: AsyncIterable<ResponsesUpstreamEvent>,
  rename: ResponseRename,
  persist: (response: ResponseObject) => Promise<void>,
  onEnd: (final: ResponseObject | undefined, errorCode?: string) => void,
  /** The client's: once it left, a failure of the upstream is its abort, not something to report or keep. */
  signal: AbortSignal,
): AsyncGenerator<SseMessage<ResponseStreamEvent>> {
  let sequence = -1;
  let snapshot: Record<string, unknown> = {};
  let final: ResponseObject | undefined;
  let errorCode: string | undefined;
  try {
    try {
      for await (const event of upstreamEvents) {
        sequence = typeof event.sequence_number === 'number' ? event.sequence_number : sequence + 1;
        const out: ResponseStreamEvent = { ...event, sequence_number: sequence };
        if (typeof event.response === 'object' && event.response !== null) {
          snapshot = event.response as Record<string, unknown>;
          const renamed = rename(snapshot);
          out.response = renamed;
          if (TERMINAL.has(event.type)) {
            await persist(renamed);
            final = renamed;
          }
        }
        yield { event: event.type, data: out };
        if (final) return;
      }
      throw new ServiceError('upstream_error', 'The upstream ended the stream before its final event.');
    } catch (error) {
      if (final || signal.aborted) return;
      const code = isServiceError(error) ? error.code : 'upstream_error';
      const message = isServiceError(error) ? error.message : 'The stream failed.';
      errorCode = code;
      final = rename({ ...snapshot, status: 'failed', error: { code, message } });
      await persist(final);
      yield { event: 'response.failed', data: { type: 'response.failed', sequence_number: sequence + 1, response: final } };
    }
  } finally {
    onEnd(final, errorCode);
  }
}
