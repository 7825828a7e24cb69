import { createParser } from 'eventsource-parser';
import { ServiceError } from '../../http/service-error.ts';
import type { EngineCallOptions } from '../provider.ts';
import { failureMidStream, redactSecret, type OpenedUpstreamCall } from './upstream-call.ts';
import type { UpstreamSettings } from './upstream-config.ts';

/** An OpenAI-compatible stream event: a chunk, or an `{ error }` the upstream sent mid-stream. */
export type UpstreamEvent = Record<string, unknown> & { error?: { message?: unknown; code?: unknown; type?: unknown } | string };

/**
 * The JSON events of an upstream's SSE body, ending at `data: [DONE]`. A failure here happens
 * after the caller's stream started, so it is a ServiceError (`upstream_timeout` when the upstream
 * stayed silent past its idle deadline, `upstream_error` otherwise) that the chat route turns into
 * a final error chunk. Leaving the loop early releases the body; the client's abort signal, which
 * the request carries, is what stops it at once when the client goes away.
 */
export async function* readUpstreamEvents(upstream: UpstreamSettings, call: OpenedUpstreamCall, options: EngineCallOptions): AsyncGenerator<UpstreamEvent> {
  const pending: string[] = [];
  let finished = false;
  const parser = createParser({
    // One event is one chunk: 8 MiB buffered without an event end is a broken upstream, not a long answer.
    maxBufferSize: 8 * 1024 * 1024,
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') pending.push('{"error":"an event over 8 MiB"}');
    },
    onEvent: (event) => {
      if (event.data === '[DONE]') finished = true;
      else if (!finished) pending.push(event.data);
    },
  });
  call.body.setEncoding('utf8');
  const pieces = call.body[Symbol.asyncIterator]();
  try {
    while (!finished) {
      let piece: IteratorResult<string>;
      try {
        piece = await pieces.next();
      } catch (error) {
        throw failureMidStream(upstream, error, options);
      }
      if (piece.done) parser.reset({ consume: true });
      else parser.feed(piece.value);
      for (let index = 0; index < pending.length; index++) yield parseEvent(upstream, pending[index]!);
      pending.length = 0;
      if (piece.done && !finished) throw new ServiceError('upstream_error', `Upstream "${upstream.id}" ended the stream without [DONE].`);
    }
  } finally {
    // After [DONE] the body ends at once: read what is left so the connection is kept for the next call.
    if (finished) await call.body.dump({ limit: 65_536 }).catch(() => {});
    else call.body.destroy();
  }
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
