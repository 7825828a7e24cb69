import { ServiceError } from '../service-error.ts';

/**
 * The one cursor codec of the routes that page by an opaque cursor (every keyset list: see
 * db/keyset-page.ts). A cursor is base64url JSON: callers hand back what `next_cursor` gave them
 * and never build one.
 */
export const encodeCursor = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

const refusal = 'not a cursor this endpoint gave out; start again without it';

/**
 * Decodes a cursor this server gave out. Anything else is the spec's answer to a bad parameter
 * (422, HTTPValidationError on `query.cursor`), the same as a cursor over its length cap.
 */
export function decodeCursor<T>(cursor: string | undefined, check: (value: unknown) => value is T): T | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (check(value)) return value;
  } catch {
    // fall through to the refusal
  }
  throw new ServiceError('validation_failed', `Invalid request: query.cursor: ${refusal}`, {
    detail: [{ loc: ['query', 'cursor'], msg: refusal, type: 'value_error' }],
  });
}
