import { z } from 'zod';
import type { HttpMethod, RouteDefinition } from './route.ts';

/**
 * Answers that say the request was not carried out, or carried out and undone: the body did not
 * arrive in time (408), a limit refused it (429), an upstream failed and its reservation was
 * released (502, 504), the server could not admit it (503). Sending it again cannot count
 * twice, so any request may be retried after them, after `Retry-After` when one is given.
 */
export const retryableStatuses = [408, 429, 502, 503, 504] as const;

/** Methods a repeat cannot change the outcome of (RFC 9110 9.2.2). */
const idempotentMethods: ReadonlySet<HttpMethod> = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/** Whether the route stores its first answer under the caller's `Idempotency-Key` (its headers declare one). */
export function honoursIdempotencyKey(route: Pick<RouteDefinition, 'headers'>): boolean {
  return route.headers instanceof z.ZodObject && 'idempotency-key' in route.headers.shape;
}

/**
 * The statuses after which a call of this route may be sent again. A 500 says nothing about how
 * far the request got, so it is retried only where a repeat cannot count twice: an idempotent
 * method, or a route that answers a repeated Idempotency-Key with the first answer.
 */
export function retryableStatusesFor(route: Pick<RouteDefinition, 'method' | 'headers'>): readonly number[] {
  return idempotentMethods.has(route.method) || honoursIdempotencyKey(route) ? [...retryableStatuses, 500] : retryableStatuses;
}

/** The rule in words, for the contract's documents (the OpenAPI description; each operation lists its statuses as `x-svc-retryable-statuses`). */
export const retryRule =
  `Retrying: an answer of ${retryableStatuses.join(', ')} means the request was not carried out, so any request may be sent again, after \`Retry-After\` when given. ` +
  'A 500 says nothing about how far the request got: it is retried only for GET, HEAD, PUT and DELETE, or on an operation that declares an `Idempotency-Key` header, sent again with the same key.';
