import type { Command } from 'commander';
import type { CliContext } from './context.ts';

/** Flags every list command takes. */
export interface ListFlags {
  all?: boolean;
  limit?: number;
}

/** Adds `--all`; each command declares `--limit` itself because its help names the page bounds. */
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
