import type { ChatStreamEvent, ResponseObject, ResponseStreamEvent, SseMessage } from '@svc/schemas';
import { isServiceError, ServiceError } from '../../service-error.ts';
import type { ChatStreamTranslator } from './translation/index.ts';
import type { ResponsesUpstreamEvent } from '../../inference/provider.ts';

/*
 * The two streams of POST /v1/responses. The passed-through one is a generator function declared
 * once, here: one made per call would keep each request alive through young collections
 * (docs/inference.md, "What the young collections promote").
 */

/** Keeps a response that ended (`store`); `json` is its text when the stream already has it. */
export type Persist = (response: ResponseObject, json?: string) => Promise<void>;

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/**
 * A chat stream (the chat route's own events, usage and failure handling included) translated to
 * the Responses events. The final response is kept (`persist`) before its terminal event is sent,
 * so a caller that continues at once with `previous_response_id` finds it on any replica.
 *
 * An iterator written out rather than an async generator: a text delta is one chat chunk in and
 * one event out, and a generator between the chat stream and the SSE writer would add its own
 * promises and turns to every event (an `await` on each `yield`, and more for `yield*`); events
 * queued together (an item's opening, the closing ones) are handed over without a turn each.
 * Closing it (the client left) closes the chat stream, which reports the partial usage.
 */
class TranslatedEvents implements AsyncIterableIterator<SseMessage<ResponseStreamEvent>> {
  readonly #chatEvents: AsyncIterator<SseMessage<ChatStreamEvent>>;
  readonly #translator: ChatStreamTranslator;
  readonly #persist: Persist;
  /** Events translated and not yet taken; `#taken` of them were. */
  readonly #queue: ResponseStreamEvent[] = [];
  #taken = 0;
  /** The translation ended (finished, failed, or closed): only the queue is left. */
  #ended = false;

  constructor(chatEvents: AsyncIterable<SseMessage<ChatStreamEvent>>, translator: ChatStreamTranslator, persist: Persist) {
    this.#chatEvents = chatEvents[Symbol.asyncIterator]();
    this.#translator = translator;
    this.#persist = persist;
    translator.start(this.#queue);
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next(): Promise<IteratorResult<SseMessage<ResponseStreamEvent>>> {
    return this.#taken < this.#queue.length ? Promise.resolve(this.#take()) : this.#translateMore();
  }

  async return(): Promise<IteratorResult<SseMessage<ResponseStreamEvent>>> {
    this.#close();
    // The chat stream's own end: a client that left has the usage so far reported.
    await this.#chatEvents.return?.();
    return DONE;
  }

  #take(): IteratorResult<SseMessage<ResponseStreamEvent>> {
    const event = this.#queue[this.#taken++]!;
    if (this.#taken === this.#queue.length) {
      this.#queue.length = 0;
      this.#taken = 0;
    }
    return { value: { event: event.type, data: event }, done: false };
  }

  #close(): void {
    this.#ended = true;
    this.#queue.length = 0;
    this.#taken = 0;
  }

  /** Reads chat events until one gives Responses events (most chunks give one), or the stream ends. */
  async #translateMore(): Promise<IteratorResult<SseMessage<ResponseStreamEvent>>> {
    const translator = this.#translator;
    const queue = this.#queue;
    while (!this.#ended) {
      let next: IteratorResult<SseMessage<ChatStreamEvent>>;
      try {
        next = await this.#chatEvents.next();
      } catch (error) {
        // The chat stream threw, so it is over: nothing of it to close.
        this.#close();
        throw error;
      }
      if (this.#ended) break;
      const chunk = next.done ? '[DONE]' : next.value.data;
      if (chunk === '[DONE]') await this.#end(() => translator.finish(queue));
      else if (chunk.error) await this.#end(() => translator.fail(chunk.error!.code, chunk.error!.message, queue));
      else {
        try {
          translator.chunk(chunk, queue);
        } catch (error) {
          if (!isServiceError(error)) {
            this.#close();
            await this.#chatEvents.return?.();
            throw error;
          }
          await this.#end(() => translator.fail(error.code, error.message, queue));
        }
      }
      if (queue.length > 0) return this.#take();
    }
    return DONE;
  }

  /**
   * The response ends: the chat stream is closed (its usage reported, when it failed), then the
   * response kept (when asked) before its last events are handed over.
   */
  async #end(ending: () => ResponseObject): Promise<void> {
    this.#ended = true;
    const response = ending();
    try {
      await this.#chatEvents.return?.();
      await this.#persist(response, this.#translator.finalJson);
    } catch (error) {
      this.#close();
      throw error;
    }
  }
}

export function translatedEvents(
  chatEvents: AsyncIterable<SseMessage<ChatStreamEvent>>,
  translator: ChatStreamTranslator,
  persist: Persist,
): AsyncIterableIterator<SseMessage<ResponseStreamEvent>> {
  return new TranslatedEvents(chatEvents, translator, persist);
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
  persist: Persist,
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
