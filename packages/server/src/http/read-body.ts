import { SMALL_BODY_BYTES } from './body-budget.ts';
import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { bodyRules, type RouteDefinition } from '@svc/schemas';
import { JsonBodyScan, refuseUnstorableStrings } from './json-text-guard.ts';
import { parseJsonOffThread } from './json-body-pool.ts';
import { ServiceError } from '../service-error.ts';
import { yieldToLoop } from '../bounded/work-in-slices.ts';

/** How a route's body is read, decided once when the contract is mounted rather than per request. */
export interface BodyPlan {
  readonly encoding: 'json' | 'form' | 'bytes';
  readonly limit: number;
  readonly timeoutMs: number | undefined;
  /** Media types accepted as they are; JSON routes also take any `+json` type. */
  readonly mediaTypes: readonly string[];
}

/** The route's body plan, or undefined when it takes no body. */
/** The most bytes a route's body may have (413 past it). */
export function bodyLimitOf(route: RouteDefinition): number {
  return route.bodyLimitBytes ?? bodyRules.defaultLimitBytes;
}

export function bodyPlanFor(route: RouteDefinition): BodyPlan | undefined {
  if (!route.body) return undefined;
  const encoding = route.bodyEncoding ?? 'json';
  const mediaTypes =
    encoding === 'bytes'
      ? (route.bodyMediaTypes ?? ['application/octet-stream'])
      : encoding === 'form'
        ? ['application/x-www-form-urlencoded']
        : ['application/json'];
  return Object.freeze({
    encoding,
    limit: bodyLimitOf(route),
    timeoutMs: route.bodyTimeoutMs,
    mediaTypes: Object.freeze([...mediaTypes]),
  });
}

function mediaTypeOf(header: string | undefined): string | undefined {
  return header?.split(';', 1)[0]?.trim().toLowerCase() || undefined;
}

/** Whether a body was sent: framing says so before a byte is read. */
export function hasBody(request: IncomingMessage): boolean {
  const { headers } = request;
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

function checkMediaType(plan: BodyPlan, header: string | undefined): void {
  // Most clients send exactly the media type: accepted without parsing the header.
  if (header !== undefined && plan.mediaTypes.includes(header)) return;
  const mediaType = mediaTypeOf(header);
  const ok = mediaType !== undefined && (plan.mediaTypes.includes(mediaType) || (plan.encoding === 'json' && mediaType.endsWith('+json')));
  if (!ok) {
    throw new ServiceError('unsupported_media_type', `Content-Type ${mediaType ?? '(none)'} is not accepted here; send ${plan.mediaTypes.join(' or ')}.`);
  }
}

/** raw-body's failures as the contract's errors. */
function bodyReadError(error: unknown, limit: number): ServiceError {
  const type = (error as { type?: string }).type;
  if (type === 'entity.too.large') return new ServiceError('payload_too_large', `The body is over ${limit} bytes, the most this endpoint takes.`);
  if (type === 'request.size.invalid') return new ServiceError('bad_request', 'The body length does not match Content-Length.');
  if (type === 'request.aborted') return new ServiceError('bad_request', 'The client aborted the request body.');
  return new ServiceError('bad_request', 'The request body could not be read.');
}

/** A body still arriving at its deadline: the connection is closed, and the call may be retried. */
function bodyTimeoutError(timeoutMs: number): ServiceError {
  return new ServiceError('request_timeout', `The body did not arrive within ${timeoutMs / 1000} s.`, { headers: { connection: 'close' }, retryable: true });
}

/** Refuses a body whose declared length is over the cap before a byte of it is read. */
function checkDeclaredLength(request: IncomingMessage, limit: number): string | undefined {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    // The body is never kept: what the client still sends is discarded within a bound (linger.ts).
    throw new ServiceError('payload_too_large', `The body is ${declared} bytes; this endpoint takes at most ${limit}.`);
  }
  return declared;
}

/**
 * Reads the bytes under the cap, within the deadline. JSON and forms are decoded as UTF-8 chunk by
 * chunk as they arrive: concatenating 21 MiB and decoding it at the end took 30 ms at once.
 */
function readBytesWithin(request: IncomingMessage, plan: BodyPlan, timeoutMs: number, scan: JsonBodyScan | undefined): Promise<Buffer | string> {
  const { limit } = plan;
  const options = { limit, length: checkDeclaredLength(request, limit) };
  const read = plan.encoding === 'bytes' ? getRawBody(request, options) : getRawBody(request, { ...options, encoding: 'utf8' });
  // Removed once the read settles: what linger.ts discards after a refusal is not scanned.
  if (scan) request.on('data', scan.write);
  const reading = read.catch((error: unknown) => {
    throw bodyReadError(error, limit);
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reading.catch(() => {});
      reject(bodyTimeoutError(timeoutMs));
    }, timeoutMs);
  });
  return Promise.race([reading, deadline]).finally(() => {
    clearTimeout(timer);
    if (scan) request.off('data', scan.write);
  });
}

/**
 * A form as an object, a repeated field as the array of its values in order: RFC 6749 forbids
 * repeating a parameter (so the route's schema refuses the array), while RFC 8707 lets `resource`
 * repeat; keeping only the last value, as `Object.fromEntries` would, hides both.
 */
function formFields(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const earlier = fields[name];
    if (earlier === undefined) fields[name] = value;
    else if (Array.isArray(earlier)) earlier.push(value);
    else fields[name] = [earlier, value];
  }
  return fields;
}

/** Decodes the bytes as the plan's encoding: parsed JSON, a form as an object, or the bytes. */
function decodeBody(plan: BodyPlan, raw: Buffer | string, scan: JsonBodyScan | undefined): unknown {
  if (typeof raw !== 'string') return raw;
  const textBody = raw;
  if (plan.encoding === 'form' || !scan) return formFields(textBody);
  // Depth is refused before parsing, NUL and lone surrogates after: what no route may store.
  const { mayHoldUnstorable } = scan.finish();
  let value: unknown;
  try {
    value = JSON.parse(textBody);
  } catch (error) {
    throw new ServiceError('malformed_json', `The body is not valid JSON: ${(error as Error).message}`);
  }
  if (mayHoldUnstorable) refuseUnstorableStrings(value);
  return value;
}

/**
 * What a body will hold in memory, decided from its framing before a byte is read: its declared
 * length, or the route's cap when it is chunked; 0 when no body was sent. Refuses a wrong media
 * type (415) and a declared length over the cap (413) here, so neither costs a read.
 */
export function bodyBytesToHold(plan: BodyPlan, request: IncomingMessage): number {
  if (!hasBody(request)) return 0;
  checkMediaType(plan, request.headers['content-type']);
  const declared = checkDeclaredLength(request, plan.limit);
  return declared === undefined ? plan.limit : Number(declared);
}

/** Where a whole-body reader puts each chunk as it arrives, and what it makes of them at the end. */
interface BodySink {
  add(chunk: Buffer, receivedBefore: number): void;
  finish(received: number): unknown;
}

/**
 * A body read whole, each chunk handed to the sink as it arrives, then decoded by it in one
 * promise. raw-body's general reader, the deadline's race and the promises chained on them cost
 * more than a small body itself on the hot path of every call (bench/http-overhead). The answers
 * are readBytesWithin's: 413 past the cap (a chunked body; a declared length was checked before),
 * 400 when the client aborts or the body ends short of its Content-Length (Node's parser never
 * passes more than it declares), 408 at the deadline.
 */
function readWhole(request: IncomingMessage, declared: number | undefined, limit: number, timeoutMs: number, sink: BodySink): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (request.readableEnded) {
      reject(new ServiceError('bad_request', 'The request body could not be read.'));
      return;
    }
    let received = 0;
    const onData = (chunk: Buffer) => {
      if (received + chunk.length > limit) {
        finish(bodyReadError({ type: 'entity.too.large' }, limit));
        return;
      }
      sink.add(chunk, received);
      received += chunk.length;
    };
    const finish = (error: ServiceError | undefined) => {
      clearTimeout(timer);
      request.off('data', onData).off('end', onEnd).off('error', onAborted).off('close', onClose);
      if (error) {
        reject(error);
        return;
      }
      try {
        resolve(sink.finish(received));
      } catch (decodeError) {
        reject(decodeError);
      }
    };
    const onEnd = () =>
      finish(declared === undefined || received === declared ? undefined : new ServiceError('bad_request', 'The body length does not match Content-Length.'));
    const onAborted = () => finish(new ServiceError('bad_request', 'The client aborted the request body.'));
    // 'end' comes before 'close' for a whole body: a close without it is a client gone mid-body.
    const onClose = () => onAborted();
    const timer = setTimeout(() => finish(bodyTimeoutError(timeoutMs)), timeoutMs);
    request.on('data', onData).on('end', onEnd).on('error', onAborted).on('close', onClose);
  });
}

/** A small JSON body's chunks, kept as they came and joined once (most bodies are one chunk). */
function smallJsonSink(plan: BodyPlan, scan: JsonBodyScan): BodySink {
  const chunks: Buffer[] = [];
  return {
    add(chunk) {
      chunks.push(chunk);
    },
    finish(received) {
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
      scan.write(bytes);
      return decodeBody(plan, bytes.toString('utf8'), scan);
    },
  };
}

/** ES2024's resizable ArrayBuffer (Node 20+), which the project's TypeScript lib predates. */
interface ResizableArrayBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}
const ResizableArrayBuffer = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableArrayBuffer;

/**
 * A large JSON body's bytes, copied as they arrive into one buffer that grows in place (its pages
 * are touched a chunk at a time, never 16 MiB in one task), scanned chunk by chunk, then moved to
 * a worker thread that decodes and parses it (json-body-pool.ts). On a 2-core VM a 16 MiB body
 * held the event loop 110-200 ms when joined and parsed here, 40-60 ms when only its value comes
 * back from the worker.
 */
function largeJsonSink(plan: BodyPlan, maxBytes: number, scan: JsonBodyScan): BodySink {
  const bytes = new ResizableArrayBuffer(0, { maxByteLength: maxBytes });
  return {
    add(chunk, receivedBefore) {
      bytes.resize(receivedBefore + chunk.length);
      new Uint8Array(bytes, receivedBefore, chunk.length).set(chunk);
      scan.write(chunk);
    },
    async finish(received) {
      // A chunked body that turned out small is parsed here, as one of known length would be.
      if (received <= OFF_THREAD_JSON_BYTES) return decodeBody(plan, Buffer.from(bytes, 0, received).toString('utf8'), scan);
      const { mayHoldUnstorable } = scan.finish();
      const value = await parseJsonOffThread(bytes, mayHoldUnstorable);
      // The value arrived in one task of the loop (its copy); the route's validation and the
      // handler's first slice of work start after a turn of the whole loop.
      await yieldToLoop();
      return value;
    },
  };
}

/** A JSON body over this many bytes is parsed in a worker thread; every route under the default cap (1 MiB) parses here. */
export const OFF_THREAD_JSON_BYTES = 1_048_576;

/** A request whose JSON body is already in memory (an in-process call, dispatch.ts) holds it here. */
export const HELD_BODY = Symbol('request body held in memory');

/**
 * A request whose JSON body is already decoded holds it here: an in-process call whose body is part
 * of a JSON text this reader decoded and checked already (an MCP tool call's arguments, dispatch.ts),
 * so its nesting and strings passed the same checks. Its Content-Length is its JSON text's, checked
 * against the route's cap as any other body's.
 */
export const HELD_VALUE = Symbol('request body held decoded');

/**
 * The raw request body as the route's plan says: parsed JSON, a form as an object, or bytes.
 * Called once `bodyBytesToHold` has found a body and checked its framing (media type, declared
 * length): a request without one never gets here, so it costs no promise. Every body has a
 * deadline: the route's own (uploads), or `defaultTimeoutMs`, so a client trickling a body cannot
 * hold its buffer for long.
 */
export function readRouteBody(plan: BodyPlan, request: IncomingMessage, defaultTimeoutMs: number): Promise<unknown> {
  const decoded = (request as { [HELD_VALUE]?: { value: unknown } })[HELD_VALUE];
  if (decoded !== undefined && plan.encoding === 'json') return Promise.resolve(decoded.value);
  const scan = plan.encoding === 'json' ? new JsonBodyScan() : undefined;
  const held = (request as { [HELD_BODY]?: Buffer })[HELD_BODY];
  if (scan && held !== undefined) {
    // An in-process call (dispatch.ts): the body is in memory already, so no stream is read and no
    // deadline set; its scan and decoding are the same as a socket's.
    scan.write(held);
    return new Promise((resolve) => resolve(decodeBody(plan, held.toString('utf8'), scan)));
  }
  const timeoutMs = plan.timeoutMs ?? defaultTimeoutMs;
  const length = request.headers['content-length'];
  const declared = length === undefined ? undefined : Number(length);
  // A small JSON body of known length (nearly every call) is read whole and scanned once: the
  // streaming reader's listener, decoder and per-chunk bookkeeping cost more than they save there.
  if (scan && declared !== undefined && declared > 0 && declared <= SMALL_BODY_BYTES)
    return readWhole(request, declared, plan.limit, timeoutMs, smallJsonSink(plan, scan));
  // A large one (or a chunked one that may be) is parsed off the event loop.
  if (scan && plan.limit > OFF_THREAD_JSON_BYTES && (declared === undefined || declared > OFF_THREAD_JSON_BYTES))
    return readWhole(request, declared, plan.limit, timeoutMs, largeJsonSink(plan, declared ?? plan.limit, scan));
  return readBytesWithin(request, plan, timeoutMs, scan).then((raw) => decodeBody(plan, raw, scan));
}
