import type { Command } from 'commander';
import { withContext } from '../context.ts';
import { table } from '../output.ts';

const percent = (rate: number | null | undefined) => (rate === null || rate === undefined ? '-' : `${(rate * 100).toFixed(1)}%`);

/** `svc cache`: the server's caches (GET /v1/cache); `svc cache purge`: the operator empties the response cache (DELETE /v1/cache). */
export function registerCacheCommands(program: Command): void {
  const cache = program
    .command('cache')
    .description("The server's caches: entries, hits, misses and hit rate; the response cache also its bytes and TTL")
    .action(
      withContext(async (cli) => {
        const report = await cli.client().models.cache();
        cli.output.result(report, ({ caches }) =>
          table([
            ['CACHE', 'ENTRIES', 'MAX', 'HITS', 'MISSES', 'HIT RATE', 'BYTES', 'TTL'],
            ...caches.map((entry) => [
              entry.name,
              String(entry.entries),
              String(entry.max_entries),
              String(entry.hits),
              String(entry.misses),
              percent(entry.hit_rate),
              entry.bytes === undefined ? '-' : String(entry.bytes),
              entry.ttl_seconds === undefined ? '-' : `${entry.ttl_seconds} s`,
            ]),
          ]),
        );
      }),
    );
  cache
    .command('purge')
    .description("Empty the response cache for every replica (operator token only); --model purges one model's entries")
    .option('--model <id>', 'purge only the entries of this model')
    .action(
      withContext(async (cli, flags: { model?: string }) => {
        const purged = await cli.client().models.purgeCache({ query: flags.model === undefined ? {} : { model: flags.model } });
        cli.output.result(purged, (result) => `purged ${result.purged_entries} entries (${result.purged_bytes} bytes) from ${result.name}`);
      }),
    );
}
