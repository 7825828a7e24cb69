import { Argument, Option, type Command } from 'commander';
import {
  artifactTypes,
  catalogContract,
  hostings,
  licenses,
  rankingSlugs,
  reviewStatuses,
  searchSorts,
  sources,
  tools,
  trendingWindows,
  type ArtifactFile,
  type ArtifactSummary,
} from '@svc/schemas';
import { withContext } from '../context.ts';
import { rangeText, requestFrom } from '../contract-flags.ts';
import { allOption, limitHelp, listLimit, printList } from '../list-output.ts';
import { table } from '../output.ts';

export const bytes = (n: number) =>
  n < 1024
    ? `${Math.round(n)} B`
    : n < 1024 ** 2
      ? `${(n / 1024).toFixed(1)} KiB`
      : n < 1024 ** 3
        ? `${(n / 1024 ** 2).toFixed(1)} MiB`
        : `${(n / 1024 ** 3).toFixed(2)} GiB`;

/** `svc search` flags, named as the search query's fields (commander camel-cases `--works-with`). */
interface SearchFlags {
  sort?: string;
  type?: string;
  license?: string;
  hosting?: string;
  source?: string;
  worksWith?: string;
  reviewStatus?: string;
  semantic?: boolean;
  explain?: boolean;
  summary?: boolean;
  limit?: string;
  cursor?: string;
  all?: boolean;
}

type SearchRow = ArtifactSummary & { score?: number | null };
const artifactCells = (row: SearchRow) => [
  row.id,
  row.type,
  row.license,
  row.hosting,
  String(row.downloads),
  row.rating === null ? '-' : row.rating.toFixed(1),
  row.summary.length > 70 ? `${row.summary.slice(0, 67)}...` : row.summary,
];
const fileCells = (row: ArtifactFile) => [row.path, bytes(row.sizeBytes), row.hosted ? 'yes' : 'no', row.sha256];

function artifactTable(rows: Array<ArtifactSummary & { score?: number | null }>): string {
  if (rows.length === 0) return 'No artifacts.';
  return table([['ID', 'TYPE', 'LICENSE', 'HOSTING', 'DOWNLOADS', 'RATING', 'SUMMARY'], ...rows.map(artifactCells)]);
}

/** `svc search`, `svc artifact ...`, `svc trending`, `svc rankings`. `svc download` lives in download.ts. */
export function registerCatalogCommands(program: Command): void {
  allOption(program.command('search'))
    .description('Search the artifact catalog (full text; --semantic ranks by embedding similarity)')
    .argument('[query...]', 'words to search for')
    .addOption(new Option('--sort <sort>', 'order of the rows').choices(searchSorts))
    .addOption(new Option('--type <type>', 'artifact type').choices(artifactTypes))
    .addOption(new Option('--license <license>', 'licence').choices(licenses))
    .addOption(new Option('--hosting <hosting>', 'hosted here or external').choices(hostings))
    .addOption(new Option('--source <source>', 'upstream source').choices(sources))
    .addOption(new Option('--works-with <tool>', 'runtime it works with').choices(tools))
    .addOption(new Option('--review-status <status>', 'review status').choices(reviewStatuses))
    .option('--semantic', 'rank by similarity of hashed n-gram embeddings')
    .option('--explain', 'say why each row ranked where it did')
    .option('--summary', 'add facet counts')
    .option('--limit <n>', limitHelp(catalogContract.search, 'query', 'rows'))
    .option('--cursor <cursor>', 'nextCursor of a previous page')
    .action(
      withContext(async (cli, words: string[], options: SearchFlags) => {
        const catalog = cli.client().catalog;
        const limit = listLimit(catalogContract.search, 'query', options);
        const { all: _all, limit: _limit, semantic, explain, summary, ...filters } = options;
        const query = (pageSize: number | undefined) =>
          requestFrom(
            catalogContract.search,
            'query',
            { ...filters, q: words.join(' ') || undefined, semantic: semantic && '1', explain: explain && '1', summary: summary && '1', limit: pageSize },
            { q: 'the search words' },
          );
        await printList(
          cli,
          { all: options.all, limit },
          {
            page: (pageSize) => catalog.search({ query: query(pageSize) }),
            all: (total) => catalog.search.all({ query: query(undefined) }, { limit: total }),
            renderPage: (page) =>
              [
                artifactTable(page.rows),
                ...page.rows.filter((row) => row.explain).map((row) => `  ${row.id}: ${row.explain!.reason}`),
                page.summary
                  ? `\n${page.summary.total} matching; by type: ${Object.entries(page.summary.type)
                      .map(([k, v]) => `${k} ${v}`)
                      .join(', ')}`
                  : '',
                page.nextCursor ? `\nMore: --cursor ${page.nextCursor} (or --all)` : '',
              ]
                .filter(Boolean)
                .join('\n'),
            renderItem: (row) => [...artifactCells(row), ...(row.explain ? [`(${row.explain.reason})`] : [])].join('  '),
          },
        );
      }),
    );

  const artifact = program.command('artifact').description('Read one artifact: show, versions, files, plan');
  artifact
    .command('show')
    .argument('<id>', 'artifact id')
    .description('Show an artifact')
    .action(
      withContext(async (cli, id: string) => {
        const data = await cli.client().catalog.artifact({ params: { id } });
        cli.output.result(data, (a) =>
          [
            `${a.name} (${a.id})`,
            `  type ${a.type}, licence ${a.license}, ${a.hosting}, source ${a.source}${a.repo ? ` ${a.repo}` : ''}`,
            `  works with: ${a.worksWith.join(', ') || '-'}; tags: ${a.tags.join(', ') || '-'}`,
            `  review status ${a.reviewStatus}; rating ${a.rating ?? '-'} (${a.reviewCount} reviews); ${a.downloads} attested downloads`,
            `  latest revision ${a.latestRevision ?? '-'}`,
            '',
            a.description || a.summary,
          ].join('\n'),
        );
      }),
    );
  artifact
    .command('versions')
    .argument('<id>', 'artifact id')
    .description('List revisions, newest first')
    .action(
      withContext(async (cli, id: string) => {
        const data = await cli.client().catalog.versions({ params: { id } });
        cli.output.result(data, (v) =>
          table([
            ['REVISION', 'LATEST', 'FILES', 'SIZE', 'CREATED', 'NOTES'],
            ...v.rows.map((row) => [row.revision, row.isLatest ? 'yes' : '', String(row.fileCount), bytes(row.totalBytes), row.createdAt, row.notes]),
          ]),
        );
      }),
    );
  allOption(artifact.command('files'))
    .argument('<id>', 'artifact id')
    .description('List files of the latest revision')
    .addOption(new Option('--tool <tool>', 'only files this runtime needs').choices(tools))
    .option('--limit <n>', limitHelp(catalogContract.files, 'query', 'rows'))
    .option('--cursor <cursor>', 'nextCursor of a previous page')
    .action(
      withContext(async (cli, id: string, options: { tool?: string; limit?: string; cursor?: string; all?: boolean }) => {
        const catalog = cli.client().catalog;
        const limit = listLimit(catalogContract.files, 'query', options);
        const request = (pageSize: number | undefined) => ({
          params: { id },
          query: requestFrom(catalogContract.files, 'query', { tool: options.tool, limit: pageSize, cursor: options.cursor }),
        });
        await printList(
          cli,
          { all: options.all, limit },
          {
            page: (pageSize) => catalog.files(request(pageSize)),
            all: (total) => catalog.files.all(request(undefined), { limit: total }),
            renderPage: (f) =>
              [table([['PATH', 'SIZE', 'HOSTED', 'SHA256'], ...f.rows.map(fileCells)]), f.nextCursor ? `More: --cursor ${f.nextCursor} (or --all)` : '']
                .filter(Boolean)
                .join('\n'),
            renderItem: (row) => fileCells(row).join('  '),
          },
        );
      }),
    );
  artifact
    .command('plan')
    .argument('<id>', 'artifact id')
    .description('Show the download plan: hosted files with the digest and size each must have')
    .addOption(new Option('--tool <tool>', 'only files this runtime needs').choices(tools))
    .action(
      withContext(async (cli, id: string, options: { tool?: string }) => {
        const data = await cli
          .client()
          .catalog.downloadPlan({ params: { id }, query: requestFrom(catalogContract.downloadPlan, 'query', { tool: options.tool }) });
        cli.output.result(data, (p) =>
          [
            `${p.artifactId} revision ${p.revision}: ${p.files.length} files, ${bytes(p.totalBytes)}`,
            table(p.files.map((file) => [file.path, bytes(file.sizeBytes), file.sha256])),
          ].join('\n'),
        );
      }),
    );

  program
    .command('trending')
    .description('Artifacts by attested pulls in a window')
    .addOption(new Option('--window <window>', 'time window').choices(trendingWindows).default('7d'))
    .option('--limit <n>', `rows (${rangeText(catalogContract.trending, 'query', 'limit')})`)
    .action(
      withContext(async (cli, options: { window: string; limit?: string }) => {
        const data = await cli.client().catalog.trending({ query: requestFrom(catalogContract.trending, 'query', options) });
        cli.output.result(data, (t) =>
          t.rows.length
            ? table([
                ['RANK', 'PULLS', 'ID', 'TYPE', 'SUMMARY'],
                ...t.rows.map((row) => [String(row.rank), String(row.pulls), row.artifact.id, row.artifact.type, row.artifact.summary]),
              ])
            : `No attested pulls in ${t.window}.`,
        );
      }),
    );

  program
    .command('rankings')
    .description('A ranking of artifacts')
    .addArgument(new Argument('<slug>', 'which ranking').choices(rankingSlugs))
    .option('--limit <n>', `rows (${rangeText(catalogContract.rankings, 'query', 'limit')})`)
    .action(
      withContext(async (cli, slug: string, options: { limit?: string }) => {
        const data = await cli.client().catalog.rankings({
          params: requestFrom(catalogContract.rankings, 'params', { slug }),
          query: requestFrom(catalogContract.rankings, 'query', options),
        });
        cli.output.result(data, (r) =>
          [
            `${r.title}: ${r.description}`,
            r.rows.length
              ? table([
                  ['RANK', 'SCORE', 'ID', 'TYPE', 'SUMMARY'],
                  ...r.rows.map((row) => [String(row.rank), String(row.score), row.artifact.id, row.artifact.type, row.artifact.summary]),
                ])
              : 'No artifacts.',
          ].join('\n'),
        );
      }),
    );
}
