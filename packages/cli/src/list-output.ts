import type { Command } from 'commander';
import { cursorPaging, everyoneViewWho, type RouteDefinition } from '@svc/schemas/core';
import type { CliContext } from './context.ts';
import { fieldRule, type FlagNames, limitText, rangeText, requestFrom, type FlagPart } from './contract-flags.ts';
import { UsageError } from './failure.ts';
import { table } from './output.ts';

/** Flags every list command takes. */
export interface ListFlags {
  all?: boolean;
  limit?: number;
}

/** `--limit`'s help on a list command: the page bounds are the route's, read from the contract. */
export const limitHelp = (route: RouteDefinition, part: FlagPart, items: string) =>
  `${items} per page (${rangeText(route, part, 'limit')}); with --all, the most ${items} in total`;

/**
 * `--limit` of a list command. Without `--all` it is the page size, within the route's bounds;
 * with `--all` it counts items over every page, so only the floor holds.
 */
export function listLimit(route: RouteDefinition, part: FlagPart, flags: { all?: boolean; limit?: string }): number | undefined {
  if (flags.limit === undefined) return undefined;
  if (!/^\d+$/.test(flags.limit)) throw new UsageError(`--limit takes a whole number, not ${JSON.stringify(flags.limit)}`);
  const rule = fieldRule(route, part, 'limit');
  const min = rule.min ?? 1;
  const limit = Number(flags.limit);
  if (flags.all && limit < min) throw new UsageError(`--limit must be a whole number of ${min} or more`);
  if (!flags.all && (limit < min || (rule.max !== undefined && limit > rule.max)))
    throw new UsageError(`--limit must be ${limitText(rule)} (with --all, any number of ${min} or more)`);
  return limit;
}

/** Adds `--all`; each command declares `--limit` itself (with `limitHelp`) because its help names the page bounds. */
export const allOption = (command: Command): Command =>
  command.option('--all', 'walk every page, printing each item as it arrives (JSON lines with --json); --limit then caps the items in total');

export interface ListSource<Page, Item> {
  /** One page; `pageSize` is `--limit` when not walking. */
  page(pageSize: number | undefined): Promise<Page>;
  /** Every item from the same starting point, at most `total` (the client's `.all()`). */
  all(total: number | undefined): AsyncIterable<Item>;
  renderPage(page: Page): string;
  renderItem(item: Item): string;
}

/**
 * One list command's output. Without `--all`: one page (the page object with `--json`) and
 * `--limit` is its size. With `--all`: every item of every page as it arrives, one line each (one
 * JSON object per line with `--json`), `--limit` the most items in total, pages at the route's
 * default size. Either way `--limit n` prints at most n items.
 */
export async function printList<Page, Item>(cli: CliContext, flags: ListFlags, source: ListSource<Page, Item>): Promise<void> {
  if (!flags.all) {
    cli.output.result(await source.page(flags.limit), source.renderPage);
    return;
  }
  let printed = 0;
  for await (const item of source.all(flags.limit)) {
    cli.output.line(item, source.renderItem);
    printed += 1;
  }
  if (printed === 0 && !cli.output.json) cli.output.notice('(none)');
}

/**
 * `--everyone` of a list whose route has an operator view (`everyone` on its contract entry):
 * every principal's rows instead of yours, sent as the route's `everyone` query flag. Its name
 * is not `--all`, which on every list walks the pages.
 */
export function everyoneOption(command: Command, route: RouteDefinition, items: string): Command {
  if (!route.everyone) throw new Error(`${route.method} ${route.path} has no operator view`);
  return command.option('--everyone', `every principal's ${items}, not only yours (${everyoneViewWho(route.everyone)} only)`);
}

/** The flags `cursorListOptions` adds, as commander parses them. */
export interface CursorListFlags {
  limit?: string;
  cursor?: string;
  all?: boolean;
  everyone?: boolean;
}

/**
 * A cursor list's flags, read from its route (`paging: cursorPaging`, a `cursorQuery`): `--limit`
 * within the route's page bounds, `--cursor`, `--all` and, where the route has an operator view,
 * `--everyone`. A command adds only its own filters, before these.
 */
export function cursorListOptions(command: Command, route: RouteDefinition, items: string): Command {
  if (route.paging !== cursorPaging) throw new Error(`${route.method} ${route.path} is not a cursor list`);
  command.option('--limit <n>', limitHelp(route, 'query', items)).option('--cursor <cursor>', 'continue from a previous page');
  return allOption(route.everyone ? everyoneOption(command, route, items) : command);
}

/** A paging client method: one page a call, and `.all()` over every item (derived by the client from `paging`). */
interface PagedMethod<Input, Item> {
  (input: Input): Promise<{ data: readonly Item[]; next_cursor: string | null }>;
  all(input: Input, options: { limit?: number }): AsyncIterable<Item>;
}

/** One cursor list command: the client method to call, what to send beside the paging flags, and the table it prints. */
export interface CursorListCall<Input, Item> {
  method: PagedMethod<Input, Item>;
  params?: Readonly<Record<string, string>>;
  /** The command's own query fields (filters), checked by the route with the paging ones. */
  filters?: Readonly<Record<string, unknown>>;
  /** Flag names of `filters` where they differ from the field's, for refusals. */
  flagNames?: FlagNames;
  header: readonly string[];
  row: (item: Item) => string[];
  /** Said instead of a table when a page is empty (without it, the header alone). */
  empty?: string;
}

/**
 * Prints a cursor list command's answer (`printList`) from its `cursorListOptions` flags: the
 * query is checked by the route, a page is a table followed by where the next one starts.
 */
export async function printCursorList<Input, Item>(
  cli: CliContext,
  route: RouteDefinition,
  flags: CursorListFlags,
  call: CursorListCall<Input, Item>,
): Promise<void> {
  const limit = listLimit(route, 'query', flags);
  const query = (pageSize: number | undefined) =>
    requestFrom(
      route,
      'query',
      { limit: pageSize, cursor: flags.cursor, everyone: flags.everyone || undefined, ...call.filters },
      { everyone: '--everyone', ...call.flagNames },
    );
  const input = (pageSize: number | undefined) => ({ ...(call.params ? { params: call.params } : {}), query: query(pageSize) }) as Input;
  await printList(
    cli,
    { all: flags.all, limit },
    {
      page: (pageSize) => call.method(input(pageSize)),
      all: (total) => call.method.all(input(undefined), { limit: total }),
      renderPage: (page) => {
        if (page.data.length === 0 && call.empty !== undefined) return call.empty;
        const lines = table([call.header as string[], ...page.data.map(call.row)]);
        return page.next_cursor ? `${lines}\nmore: --cursor ${page.next_cursor} (or --all)` : lines;
      },
      renderItem: (item) => call.row(item).join('  '),
    },
  );
}
