import { ServiceError } from '../service-error.ts';

/** Opaque cursors are base64url JSON: callers hand back what `next_cursor` gave them, never build one. */
export const encodeCursor = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Decodes a cursor this server gave out; anything else is a 422 on `query.cursor`. */
export function decodeCursor<T>(cursor: string | undefined, check: (value: unknown) => value is T): T | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (check(value)) return value;
  } catch {
    // fall through to the refusal
  }
  throw new ServiceError('validation_failed', 'Invalid request: query.cursor: not a cursor this endpoint gave out', { detail: [{ loc: ['query', 'cursor'], msg: 'not a cursor this endpoint gave out', type: 'value_error' }] });
}

/** A keyset position: the (created_at, id) of the last row of a page, newest first. */
export const isTimeIdCursor = (value: unknown): value is [string, string] =>
  Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && !Number.isNaN(Date.parse(value[0])) && typeof value[1] === 'string';
