import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted, so two bodies that mean the same thing hash the same. Recursive
 * on purpose: it only sees request bodies, which the edge refuses past 64 levels of nesting
 * (json-text-guard.ts), so its depth is bounded there rather than made iterative here.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((entry) => canonicalJson(entry === undefined ? null : entry)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, entry]) => entry !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(',')}}`;
}

/** SHA-256 of the canonical JSON of a request: what an idempotency key is bound to. */
export function requestFingerprint(routeId: string, body: unknown): string {
  return createHash('sha256').update(routeId).update('\n').update(canonicalJson(body)).digest('base64url');
}
