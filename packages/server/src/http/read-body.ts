import type { IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import type { RouteDefinition } from '@svc/schemas';
import { ServiceError } from './service-error.ts';

export const DEFAULT_BODY_LIMIT_BYTES = 1_048_576;

function mediaTypeOf(header: string | undefined): string | undefined {
  return header?.split(';', 1)[0]?.trim().toLowerCase() || undefined;
}

function hasBody(request: IncomingMessage): boolean {
  return request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
}

function checkMediaType(route: RouteDefinition, mediaType: string | undefined): void {
  const encoding = route.bodyEncoding ?? 'json';
  const accepted =
    encoding === 'bytes'
      ? (route.bodyMediaTypes ?? ['application/octet-stream'])
      : encoding === 'form'
        ? ['application/x-www-form-urlencoded']
        : ['application/json'];
  const ok = mediaType !== undefined && (accepted.includes(mediaType) || (encoding === 'json' && mediaType.endsWith('+json')));
  if (!ok) {
    throw new ServiceError('unsupported_media_type', `Content-Type ${mediaType ?? '(none)'} is not accepted here; send ${accepted.join(' or ')}.`);
  }
}

/** Reads the body under the route's byte cap and deadline; 413 is decided from Content-Length first. */
async function readBytes(request: IncomingMessage, limit: number, timeoutMs: number | undefined): Promise<Buffer> {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    // The body is never read: close the connection rather than drain it for the next request.
    throw new ServiceError('payload_too_large', `The body is ${declared} bytes; this endpoint takes at most ${limit}.`, { headers: { connection: 'close' } });
  }
  if (!timeoutMs) return rawBody(request, limit, declared);
  const reading = rawBody(request, limit, declared);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reading.catch(() => {});
      reject(new ServiceError('request_timeout', `The body did not arrive within ${timeoutMs / 1000} s.`, { headers: { connection: 'close' }, retryable: true }));
    }, timeoutMs);
  });
  try {
    return await Promise.race([reading, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** raw-body under the cap, its failures turned into the contract's errors. */
async function rawBody(request: IncomingMessage, limit: number, declared: string | undefined): Promise<Buffer> {
  try {
    return await getRawBody(request, { limit, length: declared });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') throw new ServiceError('payload_too_large', `The body is over ${limit} bytes, the most this endpoint takes.`);
    if (type === 'request.size.invalid') throw new ServiceError('bad_request', 'The body length does not match Content-Length.');
    if (type === 'request.aborted') throw new ServiceError('bad_request', 'The client aborted the request body.');
    throw new ServiceError('bad_request', 'The request body could not be read.');
  }
}

/**
 * The raw request body as the route declares it: parsed JSON, a form as an object, or bytes.
 * Answers undefined when the route takes no body or none was sent (the schema decides if that is fine).
 */
export async function readRouteBody(route: RouteDefinition, request: IncomingMessage): Promise<unknown> {
  if (!route.body) return undefined;
  if (!hasBody(request)) return undefined;
  checkMediaType(route, mediaTypeOf(request.headers['content-type']));
  const raw = await readBytes(request, route.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES, route.bodyTimeoutMs);
  const encoding = route.bodyEncoding ?? 'json';
  if (encoding === 'bytes') return raw;
  const textBody = raw.toString('utf8');
  if (encoding === 'form') return Object.fromEntries(new URLSearchParams(textBody));
  try {
    return JSON.parse(textBody);
  } catch (error) {
    throw new ServiceError('malformed_json', `The body is not valid JSON: ${(error as Error).message}`);
  }
}
