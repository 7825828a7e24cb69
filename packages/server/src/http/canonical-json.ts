import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted, so two bodies that mean the same thing hash the same. Recursive
 * on purpose: it only sees request bodies, which the edge refuses past 64 levels of nesting
 * (json-text-guard.ts), so its depth is bounded there rather than made iterative here.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  // Written with loops and `+=` into one string: a job's document of 20,000 keys made 20,000
  // entry arrays, a filtered copy and a sort calling back into JS for every comparison, about
  // 40 ms at once on the event loop (jobs-validate-json-bounded).
  if (Array.isArray(value)) {
    let text = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) text += ',';
      const entry: unknown = value[index];
      text += entry === undefined ? 'null' : canonicalJson(entry);
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  // The default sort compares UTF-16 code units, as `<` on two strings does.
  const keys = Object.keys(record).sort();
  let text = '{';
  for (const key of keys) {
    const entry = record[key];
    if (entry === undefined) continue;
    if (text.length > 1) text += ',';
    text += `${JSON.stringify(key)}:${canonicalJson(entry)}`;
  }
  return `${text}}`;
}

/** SHA-256 of the canonical JSON of a request: what an idempotency key is bound to. */
export function requestFingerprint(routeId: string, body: unknown): string {
  return createHash('sha256').update(routeId).update('\n').update(canonicalJson(body)).digest('base64url');
}
