import type { Readable } from 'node:stream';
import { createParser } from 'eventsource-parser';
import { pdfStreamEventNames, type RouteDefinition } from '@svc/schemas';

/** One event of a REST route's own stream (`sentence-selected`, `answer-delta`, `page-extracted`, ...). */
export interface RouteEvent {
  event: string;
  data: unknown;
}

/** Whether a skill's route can answer an event stream (`stream: true`): RAG, summarize, PDF extraction. */
export const streamsEvents = (route: RouteDefinition) => {
  const spec = route.responses[200];
  return spec !== undefined && 'kind' in spec && spec.kind === 'json-or-sse';
};

/** An event stream's last event: its name ends `-completed` (summary-completed, answer-completed, extraction-completed). */
const isCompletion = (event: string) => event.endsWith('-completed');

/**
 * Reads a REST route's event stream, handing each event on as it comes, and answers what the
 * route's JSON answer would have been: the completion event's data, with the PDF's pages (sent
 * one event each) put back as `pages`. An `error` event answers its `{ code, error }` as a failure.
 */
export async function readRouteEvents(
  stream: Readable,
  onEvent: (event: RouteEvent) => void,
): Promise<{ ok: true; json: unknown } | { ok: false; error: unknown }> {
  const pages: unknown[] = [];
  let completed: unknown;
  let failure: unknown;
  const parser = createParser({
    onEvent: (message) => {
      const data = JSON.parse(message.data) as unknown;
      const event = message.event ?? 'message';
      if (event === 'error') failure = data;
      else if (isCompletion(event)) completed = data;
      else {
        if (event === pdfStreamEventNames.page) pages.push(data);
        onEvent({ event, data });
      }
    },
  });
  // Streamed decoding: a character split between two chunks is joined, not mangled.
  const decoder = new TextDecoder();
  for await (const chunk of stream) parser.feed(typeof chunk === 'string' ? chunk : decoder.decode(chunk as Buffer, { stream: true }));
  if (failure !== undefined || completed === undefined)
    return { ok: false, error: failure ?? { code: 'stream_incomplete', error: 'The stream ended before its last event.' } };
  return { ok: true, json: pages.length > 0 ? { ...(completed as Record<string, unknown>), pages } : completed };
}

/** A body read whole: what a route streams back when it answers an error instead of events. */
export async function readWhole(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
