import type { PagingSpec } from '@svc/schemas';
import { SvcError } from './errors.ts';
import type { CallOptions, RequestInput } from './transport.ts';

/** Options of `.all()`: per-request options plus a cap on the items yielded in total. */
export interface ItemWalkOptions extends CallOptions {
  /** Most items yielded over all pages; the walk fetches no page past it. */
  limit?: number;
}

/** Options of `.pages()`: per-request options plus a cap on the pages fetched. */
export interface PageWalkOptions extends CallOptions {
  /** Most pages fetched. */
  maxPages?: number;
}

type FetchPage = (input: RequestInput, options: CallOptions) => Promise<unknown>;

const callOptionsOf = ({ signal, timeout, headers, idempotencyKey, retry }: CallOptions): CallOptions => ({ signal, timeout, headers, idempotencyKey, retry });

function field(page: unknown, name: string): unknown {
  return typeof page === 'object' && page !== null ? (page as Record<string, unknown>)[name] : undefined;
}

function checkCount(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= 0))
    throw new SvcError(`${name} must be a whole number of 0 or more, not ${String(value)}`, { code: 'invalid_paging_option' });
}

/** The next page's cursor, or undefined when the page says it is the last. */
export function nextCursorOf(spec: PagingSpec, page: unknown): unknown {
  if (spec.hasMore !== undefined && field(page, spec.hasMore) === false) return undefined;
  const names = typeof spec.cursor === 'string' ? [spec.cursor] : spec.cursor;
  for (const name of names) {
    const cursor = field(page, name);
    if (cursor !== null && cursor !== undefined) return cursor;
  }
  return undefined;
}

/** The request for the page after `cursor`: the caller's request with the cursor put where the contract says. */
export function requestAfter(spec: PagingSpec, request: RequestInput, cursor: unknown): RequestInput {
  const target: Record<string, unknown> = { ...((request[spec.cursorIn] as Record<string, unknown> | undefined) ?? {}) };
  if (spec.cursorParam !== undefined) target[spec.cursorParam] = cursor;
  else {
    // An object cursor (`{ before, before_id }`) replaces those fields; a null member clears its field.
    for (const [name, value] of Object.entries(cursor as Record<string, unknown>)) {
      if (value === null || value === undefined) delete target[name];
      else target[name] = value;
    }
  }
  return { ...request, [spec.cursorIn]: target };
}

/**
 * Pages of a list route, fetched one at a time as the loop asks for them. Breaking out of the
 * loop fetches nothing more; an aborted `signal` ends the walk with its reason. A server that
 * answers a cursor it already gave would loop for ever, so that ends the walk with `paging_stalled`
 * (cursors are short, so remembering each one costs little even over many pages).
 */
export async function* walkPages(
  spec: PagingSpec,
  fetchPage: FetchPage,
  request: RequestInput = {},
  options: PageWalkOptions = {},
): AsyncGenerator<unknown, void, undefined> {
  checkCount('maxPages', options.maxPages);
  const call = callOptionsOf(options);
  let next = request;
  const seenCursors = new Set<string>();
  for (let fetched = 0; options.maxPages === undefined || fetched < options.maxPages; fetched += 1) {
    options.signal?.throwIfAborted();
    const page = await fetchPage(next, call);
    yield page;
    const cursor = nextCursorOf(spec, page);
    if (cursor === undefined) return;
    const cursorText = JSON.stringify(cursor);
    if (seenCursors.has(cursorText))
      throw new SvcError(`The server answered the cursor ${cursorText} twice; stopping rather than reading the same pages again`, { code: 'paging_stalled' });
    seenCursors.add(cursorText);
    next = requestAfter(spec, next, cursor);
  }
}

/** Items of every page in order, up to `limit` in total. */
export async function* walkItems(
  spec: PagingSpec,
  fetchPage: FetchPage,
  request: RequestInput = {},
  options: ItemWalkOptions = {},
): AsyncGenerator<unknown, void, undefined> {
  checkCount('limit', options.limit);
  if (options.limit === 0) return;
  let yielded = 0;
  for await (const page of walkPages(spec, fetchPage, request, options)) {
    const items = field(page, spec.items);
    if (!Array.isArray(items)) throw new SvcError(`The page has no "${spec.items}" list`, { code: 'unexpected_response' });
    for (const item of items) {
      options.signal?.throwIfAborted();
      yield item;
      yielded += 1;
      if (options.limit !== undefined && yielded >= options.limit) return;
    }
  }
}
