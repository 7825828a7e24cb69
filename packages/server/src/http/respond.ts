import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ResponseSpec, SseMessage } from '@svc/schemas';
import { SerializedJson } from './serialized-json.ts';
import { writeSse } from './sse.ts';
import { ServiceError } from '../service-error.ts';

export interface HandlerResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RespondOptions {
  validate: boolean;
  signal: () => AbortSignal;
  onStreamError: (error: unknown) => { code: string; error: string };
  /** Silence after which an SSE stream gets a keep-alive comment. */
  sseKeepAliveMs?: number;
  /** Aborts when the server begins to drain: open event streams end with a final event. */
  shutdown?: AbortSignal;
}

/** The statuses a route answers with a JSON schema: found once at mount time, answered by `writeJson`. */
export function jsonStatusesOf(responses: Readonly<Record<number, ResponseSpec>>): ReadonlySet<number> {
  return new Set(
    Object.entries(responses)
      .filter(([, spec]) => spec instanceof z.ZodType)
      .map(([status]) => Number(status)),
  );
}

function setResultHeaders(ctx: Context, headers: Record<string, string> | undefined): void {
  if (headers === undefined) return;
  for (const name in headers) ctx.set(name, headers[name]!);
}

/**
 * A JSON answer of a status the contract declares with a schema (unchecked: see `respond` for
 * the checked path). The most common answer, so it asks nothing of the spec.
 */
export function writeJson(ctx: Context, result: HandlerResult): void {
  setResultHeaders(ctx, result.headers);
  ctx.status = result.status;
  // Header set directly: Koa's `type` setter does a MIME lookup per request.
  ctx.res.setHeader('content-type', 'application/json; charset=utf-8');
  ctx.body = result.body instanceof SerializedJson ? result.body.bytes : JSON.stringify(result.body);
}

/**
 * Starts writing an event stream. Called by the request's middleware once it has set its last
 * headers (latency, caching): the stream's headers go out with its first event.
 */
export type StartStream = () => void;

/**
 * Writes a handler's answer as its contract entry says: JSON, text, bytes, SSE, redirect or
 * empty. An event stream is written by svc itself, not by Koa: it answers the function that
 * starts it, to be called when the middleware is done with the headers.
 */
export function respond(ctx: Context, spec: ResponseSpec | undefined, result: HandlerResult, options: RespondOptions): StartStream | undefined {
  if (!spec) throw new Error(`Handler answered status ${result.status}, which its contract entry does not declare`);
  if (spec instanceof z.ZodType) {
    if (options.validate) {
      const checked = spec.safeParse(result.body instanceof SerializedJson ? result.body.toJSON() : result.body);
      if (!checked.success) throw new Error(`Response of status ${result.status} breaks its contract: ${z.prettifyError(checked.error)}`);
    }
    writeJson(ctx, result);
    return undefined;
  }
  setResultHeaders(ctx, result.headers);
  ctx.status = result.status;
  if (spec.kind === 'json-or-sse') {
    // The handler decides: an async iterable streams, anything else is the JSON answer.
    const streams = typeof (result.body as AsyncIterable<unknown> | undefined)?.[Symbol.asyncIterator] === 'function';
    return respond(ctx, streams ? { kind: 'sse', event: spec.event } : spec.json, result, options);
  }
  if (spec.kind === 'json-or-bytes') {
    const body = result.body as { [Symbol.asyncIterator]?: unknown } | undefined;
    const isBytes = body instanceof Uint8Array || typeof body?.[Symbol.asyncIterator] === 'function';
    return respond(ctx, isBytes ? { kind: 'bytes', contentType: spec.contentType } : spec.json, result, options);
  }
  switch (spec.kind) {
    case 'text':
      ctx.type = spec.contentType;
      ctx.body = String(result.body ?? '');
      return undefined;
    case 'bytes': {
      // A handler that names its own Content-Type (the MCP endpoint's JSON or event stream) keeps
      // it; one with its charset already was set above as Koa's type setter (a MIME lookup) would write it.
      const given = result.headers?.['content-type'];
      if (given === undefined || !given.includes('charset=')) ctx.type = given ?? spec.contentType;
      const body = result.body;
      // A string is its UTF-8 bytes, written with the headers in one write (a buffer takes two).
      ctx.body =
        typeof body === 'string'
          ? body
          : body instanceof Uint8Array
            ? Buffer.from(body.buffer, body.byteOffset, body.byteLength)
            : Readable.from(body as AsyncIterable<Uint8Array>);
      return undefined;
    }
    case 'sse': {
      const { res } = ctx;
      res.setHeader('content-type', 'text/event-stream; charset=utf-8');
      res.setHeader('cache-control', 'no-cache, no-transform');
      res.setHeader('x-accel-buffering', 'no');
      ctx.req.socket.setNoDelay(true);
      ctx.respond = false;
      const events = result.body as AsyncIterable<SseMessage<unknown>>;
      return () => writeSse(res, events, options.signal(), options.onStreamError, { keepAliveMs: options.sseKeepAliveMs, shutdown: options.shutdown });
    }
    case 'redirect':
      // Koa turns a null body into 204, so the redirect keeps Koa's short status-text body.
      if (!result.headers?.location) throw new ServiceError('internal_error', 'Redirect without a location.');
      return undefined;
    case 'empty':
      // Koa turns a null body into 204 whatever the status; an empty string keeps the declared
      // one (RFC 7009 revocation answers 200, an MCP notification 202) with no content type.
      if (result.status === 204 || result.status === 304) {
        ctx.body = null;
        return undefined;
      }
      ctx.body = '';
      ctx.remove('content-type');
      return undefined;
  }
}
