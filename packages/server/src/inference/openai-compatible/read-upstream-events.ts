import { createParser } from 'eventsource-parser';
import { ServiceError } from '../../http/service-error.ts';
import type { EngineCallOptions } from '../provider.ts';
import type { OpenedUpstreamCall } from './upstream-call.ts';
import { redactSecret } from './upstream-call.ts';
import type { UpstreamSettings } from './upstream-config.ts';

/** An OpenAI-compatible stream event: a chunk, or an `{ error }` the upstream sent mid-stream. */
export type UpstreamEvent = Record<string, unknown> & { error?: { message?: unknown; code?: unknown; type?: unknown } | string };

/**
 * The JSON events of an upstream's SSE body, ending at `data: [DONE]` or the end of the body.
 * Each piece of the body restarts the idle deadline. A failure here happens after the caller's
 * stream started, so it is a ServiceError (`upstream_timeout`, `upstream_error`) that the chat
 * route turns into a final error chunk. Breaking the loop cancels the body (and so the request).
 */
export async function* readUpstreamEvents(upstream: UpstreamSettings, call: OpenedUpstreamCall, options: EngineCallOptions): AsyncGenerator<UpstreamEvent> {
  const pending: string[] = [];
  let finished = false;
  const parser = createParser({
    onEvent: (event) => {
      if (event.data === '[DONE]') finished = true;
      else if (!finished) pending.push(event.data);
    },
  });
  const decoder = new TextDecoder();
  const reader = call.response.body!.getReader();
  try {
    while (!finished) {
      let piece: ReadableStreamReadResult<Uint8Array>;
      try {
        piece = await reader.read();
      } catch (error) {
        if (call.deadline.timedOut) throw new ServiceError('upstream_timeout', `Upstream "${upstream.id}" went silent mid-stream.`);
        if (options.signal.aborted) throw error;
        throw new ServiceError('upstream_error', `Upstream "${upstream.id}" broke off the stream.`);
      }
      if (piece.done) parser.feed(decoder.decode());
      else {
        call.deadline.touch();
        parser.feed(decoder.decode(piece.value, { stream: true }));
      }
      for (let index = 0; index < pending.length; index++) yield parseEvent(upstream, pending[index]!);
      pending.length = 0;
      if (piece.done && !finished) throw new ServiceError('upstream_error', `Upstream "${upstream.id}" ended the stream without [DONE].`);
    }
  } finally {
    call.deadline.finish();
    await reader.cancel().catch(() => {});
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
