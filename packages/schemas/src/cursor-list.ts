import { z } from 'zod';
import { pageLimit } from './query.ts';

// The paging declaration that goes with these schemas is `cursorPaging` (cursor-paging.ts): it
// imports the route types, which import the principal's limits, whose usage page is a cursorList,
// so it lives apart to keep the import graph without a cycle.

/** How long a cursor may be unless a list says otherwise: it holds a row's sort keys, base64url JSON. */
const CURSOR_MAX_CHARS = 1024;

export interface CursorQueryOptions {
  /** The largest page (`limit` 1..max). */
  readonly max: number;
  /** The page size when `limit` is left out. */
  readonly default: number;
  /** The longest cursor accepted (default 1,024 characters); a longer one is 422 on `query.cursor`. */
  readonly cursorMaxChars?: number;
}

/**
 * The query of a cursor list: `limit` and the opaque `cursor` a previous page's `next_cursor`
 * gave. Extend it with the list's own filters.
 */
export const cursorQuery = (options: CursorQueryOptions) => {
  const maxChars = options.cursorMaxChars ?? CURSOR_MAX_CHARS;
  return z.object({
    limit: pageLimit(options.max, options.default),
    cursor: z.string().max(maxChars, `a cursor holds at most ${maxChars} characters`).optional().describe('Opaque; from `next_cursor`'),
  });
};

export interface CursorListOptions {
  /** Answer `object: "list"` too (OpenAI's and Stripe's list shape); lists that never did, don't. */
  readonly object?: boolean;
  /** What `data` holds and in which order, when the item's own description does not say. */
  readonly order?: string;
}

const nextCursor = () => z.string().nullable().describe('Give it as `cursor` for the next page; null on the last page.');

/** One page of a cursor list: `{ data, has_more, next_cursor }` (with `object: "list"` when asked). Name it with `.meta({ id })`. */
export function cursorList<const I extends z.ZodType>(item: I, options: CursorListOptions & { readonly object: true }): ReturnType<typeof listWithObject<I>>;
export function cursorList<const I extends z.ZodType>(item: I, options?: CursorListOptions): ReturnType<typeof plainList<I>>;
export function cursorList<const I extends z.ZodType>(item: I, options: CursorListOptions = {}) {
  return options.object ? listWithObject(item, options.order) : plainList(item, options.order);
}

const itemsOf = <I extends z.ZodType>(item: I, order: string | undefined) => (order ? z.array(item).describe(order) : z.array(item));

function plainList<I extends z.ZodType>(item: I, order?: string) {
  return z.object({ data: itemsOf(item, order), has_more: z.boolean(), next_cursor: nextCursor() });
}

function listWithObject<I extends z.ZodType>(item: I, order?: string) {
  return z.object({ object: z.literal('list'), data: itemsOf(item, order), has_more: z.boolean(), next_cursor: nextCursor() });
}
