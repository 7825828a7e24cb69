import { Option, type Command } from 'commander';
import {
  catalogRequestKinds,
  catalogRequestStatuses,
  requestsContract,
  sources,
  type CatalogRequestKind,
  type CatalogRequestReceiptResponse,
  type CatalogRequestStatus,
  type CatalogRequestSubmissionResponse,
  type CatalogRequestSummary,
  type OpenSourceRadarResponse,
} from '@svc/schemas';
import { withContext, type CliContext } from '../context.ts';
import { rangeText, requestFrom } from '../contract-flags.ts';
import { everyoneOption } from '../list-output.ts';
import { table } from '../output.ts';

/** The one line that says what a request asks for. */
const whatOf = (request: Pick<CatalogRequestSummary, 'kind' | 'details'>) =>
  request.kind === 'feature'
    ? `${request.details.capability} (${request.details.task})`
    : (request.details.artifact_id ?? `${request.details.source}:${request.details.repo}`);

function printFiled(cli: CliContext, filed: CatalogRequestSubmissionResponse): void {
  cli.output.result(filed, (data) =>
    data.replayed
      ? `Already filed ${data.request_id} (${data.kind}, ${data.status}); nothing new was created.`
      : `Filed ${data.request_id} (${data.kind}, ${data.status}). Follow it with: svc request status ${data.request_id}`,
  );
  if (filed.screening.action === 'escalate') cli.output.notice(`Screening flagged the text for the operator: ${filed.screening.findings.join(', ')}.`);
}

function renderReceipt(receipt: CatalogRequestReceiptResponse): string {
  const lines = [
    `${receipt.request_id}  ${receipt.kind}  ${receipt.status}`,
    `  asks: ${whatOf(receipt)}`,
    `  use case: ${receipt.details.use_case}`,
    receipt.details.target_tool ? `  target tool: ${receipt.details.target_tool}` : '',
    receipt.note ? `  note: ${receipt.note}` : '',
    receipt.duplicate_of ? `  duplicate of: ${receipt.duplicate_of}` : '',
    receipt.fulfilled_by ? `  fulfilled by: ${receipt.fulfilled_by}` : '',
    `  filed ${receipt.created_at} via ${receipt.submitted_via}`,
    'history:',
    ...receipt.history.map(
      (entry) =>
        `  ${entry.at}  ${entry.previous_status ? `${entry.previous_status} -> ` : ''}${entry.status}  by ${entry.actor}${entry.note ? `: ${entry.note}` : ''}`,
    ),
  ];
  return lines.filter(Boolean).join('\n');
}

function renderRadar(radar: OpenSourceRadarResponse): string {
  if (radar.data.length === 0) return 'Nothing on the radar.';
  return table([
    ['RANK', 'REQUESTERS', 'KIND', 'WHAT', 'STATUS', 'IN CATALOG'],
    ...radar.data.map((entry) => [
      String(entry.rank),
      String(entry.requesters),
      entry.kind,
      entry.artifact_id ?? `${entry.source}:${entry.repo}`,
      entry.latest_status,
      entry.in_catalog ? (entry.hosted ? 'hosted' : 'listed') : 'no',
    ]),
  ]);
}

interface TargetFlags {
  useCase: string;
  targetTool: string;
}

/** `svc request feature|mirror|source|status|moderate` and `svc radar`: catalog requests. */
export function registerRequestCommands(program: Command): void {
  const request = program.command('request').description('Ask for what the catalog lacks, and follow your requests');
  const sourceOption = () => new Option('--source <source>', 'where the repository lives').choices(sources);

  request
    .command('feature')
    .description('Ask for a capability the catalog lacks')
    .requiredOption('--capability <text>', 'what is missing, e.g. "a reranker for German legal text"')
    .requiredOption('--task <task>', 'the task it serves, e.g. rerank, embeddings, toxicity')
    .requiredOption('--use-case <text>', 'what you would do with it')
    .option('--target-tool <tool>', 'the runtime you would run it on')
    .action(
      withContext(async (cli, flags: { capability: string; task: string; useCase: string; targetTool?: string }) => {
        printFiled(
          cli,
          await cli
            .client()
            .requests.feature({ body: { capability: flags.capability, task: flags.task, use_case: flags.useCase, target_tool: flags.targetTool } }),
        );
      }),
    );

  request
    .command('mirror')
    .description('Ask the operator to host the files of a catalog artifact (--artifact) or an upstream repository (--repo and --source)')
    .option('--artifact <id>', 'catalog artifact id')
    .option('--repo <repo>', 'upstream repository, e.g. sentence-transformers/all-MiniLM-L6-v2')
    .addOption(sourceOption())
    .requiredOption('--use-case <text>', 'what you would do with it')
    .requiredOption('--target-tool <tool>', 'the runtime you would run it on')
    .action(
      withContext(async (cli, flags: TargetFlags & { artifact?: string; repo?: string; source?: (typeof sources)[number] }) => {
        printFiled(
          cli,
          await cli.client().requests.mirror({
            body: { artifact_id: flags.artifact, repo: flags.repo, source: flags.source, use_case: flags.useCase, target_tool: flags.targetTool },
          }),
        );
      }),
    );

  request
    .command('source')
    .description('Ask the operator to add an upstream repository to the catalog')
    .requiredOption('--repo <repo>', 'upstream repository, e.g. BAAI/bge-small-en-v1.5')
    .addOption(sourceOption().makeOptionMandatory())
    .requiredOption('--use-case <text>', 'what you would do with it')
    .requiredOption('--target-tool <tool>', 'the runtime you would run it on')
    .action(
      withContext(async (cli, flags: TargetFlags & { repo: string; source: (typeof sources)[number] }) => {
        printFiled(
          cli,
          await cli.client().requests.source({ body: { repo: flags.repo, source: flags.source, use_case: flags.useCase, target_tool: flags.targetTool } }),
        );
      }),
    );

  everyoneOption(
    request.command('status').description('Your requests, newest first; or one request with its history').argument('[request_id]', 'show this request'),
    requestsContract.status,
    'requests',
  )
    // Before --everyone, --all meant everyone's here; still taken, with a notice, never as "every page".
    .addOption(new Option('--all', 'deprecated: the old name of --everyone').hideHelp())
    .addOption(new Option('--kind <kind>', 'only this kind').choices(catalogRequestKinds))
    .addOption(new Option('--status <status>', 'only this status').choices(catalogRequestStatuses))
    .option('--limit <n>', `page size, ${rangeText(requestsContract.status, 'query', 'limit')}`)
    .option('--cursor <cursor>', 'continue from a previous page')
    .action(
      withContext(
        async (
          cli,
          requestId: string | undefined,
          flags: { everyone?: boolean; all?: boolean; kind?: CatalogRequestKind; status?: CatalogRequestStatus; limit?: string; cursor?: string },
        ) => {
          if (flags.all)
            cli.output.notice("--all is the old name of --everyone on `svc request status` (every principal's requests, one page); use --everyone.");
          if (requestId !== undefined) {
            cli.output.result(await cli.client().requests.receipt({ params: { request_id: requestId } }), renderReceipt);
            return;
          }
          const query = requestFrom(
            requestsContract.status,
            'query',
            { everyone: flags.everyone || flags.all || undefined, kind: flags.kind, status: flags.status, limit: flags.limit, cursor: flags.cursor },
            { everyone: '--everyone' },
          );
          const page = await cli.client().requests.status({ query });
          cli.output.result(page, (data) => {
            if (data.data.length === 0) return 'No catalog requests.';
            const rows = table([
              ['ID', 'KIND', 'STATUS', 'CREATED', 'WHAT'],
              ...data.data.map((entry) => [entry.request_id, entry.kind, entry.status, entry.created_at, whatOf(entry)]),
            ]);
            return data.next_cursor ? `${rows}\nmore: --cursor ${data.next_cursor}` : rows;
          });
        },
      ),
    );

  request
    .command('moderate')
    .description("Set a request's status and a note (operator token only)")
    .argument('<request_id>')
    .addOption(
      new Option('--status <status>', 'the new status').choices(catalogRequestStatuses.filter((status) => status !== 'submitted')).makeOptionMandatory(),
    )
    .option('--note <text>', 'why, for the requester')
    .option('--duplicate-of <request_id>', 'with --status duplicate: the request that carries this ask on')
    .option('--fulfilled-by <artifact_id>', 'with --status fulfilled: the catalog artifact that answers it')
    .action(
      withContext(
        async (
          cli,
          requestId: string,
          flags: { status: Exclude<CatalogRequestStatus, 'submitted'>; note?: string; duplicateOf?: string; fulfilledBy?: string },
        ) => {
          const receipt = await cli.client().requests.moderate({
            params: { request_id: requestId },
            body: { status: flags.status, note: flags.note, duplicate_of: flags.duplicateOf, fulfilled_by: flags.fulfilledBy },
          });
          cli.output.result(receipt, renderReceipt);
        },
      ),
    );

  program
    .command('radar')
    .description('The open-source radar: the most requested sources and mirrors, by distinct requesters')
    .option('--limit <n>', `rows, ${rangeText(requestsContract.radar, 'query', 'limit')}`)
    .action(
      withContext(async (cli, flags: { limit?: string }) => {
        cli.output.result(await cli.client().requests.radar({ query: requestFrom(requestsContract.radar, 'query', flags) }), renderRadar);
      }),
    );
}
