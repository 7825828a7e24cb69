import { createParser } from 'eventsource-parser';
import { ServiceError } from '../../service-error.ts';
import type { EngineCallOptions } from '../provider.ts';
import { failureMidStream, redactSecret, type OpenedUpstreamCall } from './upstream-call.ts';
import type { UpstreamSettings } from './upstream-config.ts';

/** An OpenAI-compatible stream event: a chunk, or an `{ error }` the upstream sent mid-stream. */
export type UpstreamEvent = Record<string, unknown> & { error?: { message?: unknown; code?: unknown; type?: unknown } | string };

/** Events parsed and not yet taken past which the body is paused: a slow client slows the upstream, svc buffers no more. */
const MAX_WAITING_EVENTS = 64;
/** What an upstream may still send after `[DONE]` and keep its connection for the next call. */
const AFTER_DONE_MAX_BYTES = 65_536;

/** An async iterator whose `return` is always there (the chat stream's producer). */
export type UpstreamEventStream<T> = AsyncIterableIterator<T> & { return(): Promise<IteratorResult<T>> };

/**
 * The JSON events of an upstream's SSE body, ending at `data: [DONE]`, each given to `map` with
 * its JSON text (so an event forwarded unchanged need not be serialised again). A failure here
 * happens after the caller's stream started, so it is a ServiceError (`upstream_timeout` when the
 * upstream stayed silent past its idle deadline, `upstream_error` otherwise) that the chat route
 * turns into a final error chunk, after the events that came before it. Leaving early (`return`)
 * releases the body; the client's abort signal, which the request carries, is what stops it at
 * once when the client goes away.
 *
 * The body's text goes straight into the SSE parser and the events wait in a queue for `next`,
 * rather than through a stream's async iterator and a generator over it: one promise per event
 * between the socket and the chat stream, not three (this is the per-chunk path).
 */
export function readUpstreamEvents<T>(
  upstream: UpstreamSettings,
  call: OpenedUpstreamCall,
  options: EngineCallOptions,
  map: (event: UpstreamEvent, json: string) => T,
  /** The Responses API ends a stream with its last event and the body's end, no `[DONE]`: the caller then checks that the last event was a final one. */
  endsWithoutDone = false,
): UpstreamEventStream<T> {
  /** Data of the events not yet taken, from `taken` on. */
  const waiting: string[] = [];
  let taken = 0;
  let sawDone = false;
  let bodyEnded = false;
  let released = false;
  let failure: Error | undefined;
  let bytesAfterDone = 0;
  let wake: (() => void) | undefined;
  const parser = createParser({
    // One event is one chunk: 8 MiB buffered without an event end is a broken upstream, not a long answer.
    maxBufferSize: 8 * 1024 * 1024,
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded' && !sawDone) waiting.push('{"error":"an event over 8 MiB"}');
    },
    onEvent: (event) => {
      if (event.data === '[DONE]') sawDone = true;
      else if (!sawDone) waiting.push(event.data);
    },
  });
  const signal = () => {
    wake?.();
    wake = undefined;
  };
  call.read({
    data: (piece) => {
      if (sawDone) {
        // After [DONE] the body ends at once; what is left is read so the connection is kept.
        bytesAfterDone += piece.length;
        if (bytesAfterDone > AFTER_DONE_MAX_BYTES) call.abort(new Error('The upstream went on after [DONE].'));
        return;
      }
      parser.feed(piece);
      if (waiting.length - taken >= MAX_WAITING_EVENTS && !released) call.pause();
      signal();
    },
    end: () => {
      bodyEnded = true;
      parser.reset({ consume: true });
      if (endsWithoutDone) sawDone = true;
      else if (!sawDone) failure ??= new ServiceError('upstream_error', `Upstream "${upstream.id}" ended the stream without [DONE].`);
      signal();
    },
    error: (error) => {
      if (!sawDone && !released) failure ??= failureMidStream(upstream, error, options);
      signal();
    },
  });
  /** Stops reading: the connection is kept when the body was read to its end, closed otherwise. */
  const release = () => {
    if (released) return;
    released = true;
    waiting.length = 0;
    taken = 0;
    if (!bodyEnded && !sawDone) call.abort(new Error('The caller stopped reading the stream.'));
    else if (call.paused) call.resume();
  };
  const done = (): IteratorResult<T> => {
    release();
    return { value: undefined, done: true };
  };

  const next = async (): Promise<IteratorResult<T>> => {
    for (;;) {
      if (released) return { value: undefined, done: true };
      if (taken < waiting.length) {
        const data = waiting[taken]!;
        waiting[taken++] = '';
        if (taken === waiting.length) {
          waiting.length = 0;
          taken = 0;
          if (call.paused && !bodyEnded) call.resume();
        }
        try {
          return { value: map(parseEvent(upstream, data), data), done: false };
        } catch (error) {
          release();
          throw error;
        }
      }
      if (sawDone) return done();
      if (failure) {
        release();
        throw failure;
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  return {
    next,
    return: async () => done(),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

function parseEvent(upstream: UpstreamSettings, data: string): UpstreamEvent {
  let event: UpstreamEvent;
  try {
    event = JSON.parse(data) as UpstreamEvent;
  } catch {
    throw new ServiceError('upstream_error', `Upstream "${upstream.id}" sent an event that is not JSON.`);
  }
  if (event.error !== undefined) {
    const message = typeof event.error === 'string' ? event.error : typeof event.error.message === 'string' ? event.error.message : 'no message';
    throw new ServiceError('upstream_error', `Upstream "${upstream.id}" failed mid-stream: ${redactSecret(message.slice(0, 500), upstream)}`);
  }
  return event;
}
