import { SMALL_BODY_BYTES } from './body-budget.ts';
import type { IncomingMessage } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import getRawBody from 'raw-body';
import { bodyRules, type RouteDefinition } from '@svc/schemas';
import { JsonBodyScan, refuseUnstorableStrings } from './json-text-guard.ts';
import { ServiceError } from '../service-error.ts';

/** How a route's body is read, decided once when the contract is mounted rather than per request. */
export interface BodyPlan {
  readonly encoding: 'json' | 'form' | 'bytes';
  readonly limit: number;
  readonly timeoutMs: number | undefined;
  /** Media types accepted as they are; JSON routes also take any `+json` type. */
  readonly mediaTypes: readonly string[];
}

/** The route's body plan, or undefined when it takes no body. */
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
    limit: route.bodyLimitBytes ?? bodyRules.defaultLimitBytes,
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

/**
 * A small body of declared length, read whole and decoded in one promise. raw-body's general
 * reader, the deadline's race and the promises chained on them cost more than the body itself on
 * the hot path of every call (bench/http-overhead). The answers are readBytesWithin's: 400 when
 * the client aborts or the body ends short of its Content-Length (Node's parser never passes more
 * than it declares), 408 at the deadline.
 */
function readSmallBody(request: IncomingMessage, length: number, timeoutMs: number, decode: (bytes: Buffer) => unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (request.readableEnded) {
      reject(new ServiceError('bad_request', 'The request body could not be read.'));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const finish = (error: ServiceError | undefined) => {
      clearTimeout(timer);
      request.off('data', onData).off('end', onEnd).off('error', onAborted).off('close', onClose);
      if (error) {
        reject(error);
        return;
      }
      try {
        resolve(decode(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)));
      } catch (decodeError) {
        reject(decodeError);
      }
    };
    const onEnd = () => finish(received === length ? undefined : new ServiceError('bad_request', 'The body length does not match Content-Length.'));
    const onAborted = () => finish(new ServiceError('bad_request', 'The client aborted the request body.'));
    // 'end' comes before 'close' for a whole body: a close without it is a client gone mid-body.
    const onClose = () => onAborted();
    const timer = setTimeout(() => finish(bodyTimeoutError(timeoutMs)), timeoutMs);
    request.on('data', onData).on('end', onEnd).on('error', onAborted).on('close', onClose);
  });
}

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
  const declared = Number(request.headers['content-length']);
  // A small JSON body of known length (nearly every call) is read whole and scanned once: the
  // streaming reader's listener, decoder and per-chunk bookkeeping cost more than they save there.
  if (scan && declared > 0 && declared <= SMALL_BODY_BYTES) {
    return readSmallBody(request, declared, plan.timeoutMs ?? defaultTimeoutMs, (bytes) => {
      scan.write(bytes);
      return decodeBody(plan, bytes.toString('utf8'), scan);
    });
  }
  return readBytesWithin(request, plan, plan.timeoutMs ?? defaultTimeoutMs, scan).then(async (raw) => {
    if (typeof raw !== 'string' || raw.length < JOIN_APART_CHARS) return decodeBody(plan, raw, scan);
    joinPieces(raw);
    await nextTurn();
    const value = decodeBody(plan, raw, scan);
    // The route's validation and the handler's first slice of work start in a turn of their own too.
    await nextTurn();
    return value;
  });
}

/**
 * A text body is decoded piece by piece as it arrives, so it is a string of many pieces, which
 * JSON.parse first copies into one. At 16 MiB that copy took 68 ms and the parse 88 ms on a 2-core
 * VM (each fresh page of memory costs a fault there), one stretch of about 144 ms on the event loop
 * (the stall suite's documents.extract). So a large body is joined in one turn of the loop,
 * parsed in the next, and handed on in a third. Joining relies on V8 flattening a string in place
 * when a regular expression runs on it: were that to change, the parse would join it again,
 * slower but the same.
 */
const JOIN_APART_CHARS = 1024 * 1024;
const TOUCHES_EVERY_STRING = /^/;
function joinPieces(text: string): void {
  TOUCHES_EVERY_STRING.test(text);
}
