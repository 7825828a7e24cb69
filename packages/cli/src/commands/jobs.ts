import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import {
  batchJobRequestSchemaId,
  jobLimits,
  jobOperations,
  jobsContract,
  jobStatuses,
  type BatchJob,
  type BatchJobRequest,
  type BatchJobResult,
  type JobOperation,
  type JobStatus,
} from '@svc/schemas';
import { withContext, type CliContext } from '../context.ts';
import { CliFailure, UsageError } from '../failure.ts';
import { cursorListOptions, type CursorListFlags, printCursorList } from '../list-output.ts';

function parseItem(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${where} is not JSON: ${(error as Error).message}`);
  }
}

/** Items from `--item` values and a JSON Lines file (one item per non-empty line). */
async function readItems(values: string[], file: string | undefined): Promise<unknown[]> {
  const items = values.map((value, index) => parseItem(value, `--item ${index + 1}`));
  if (file !== undefined) {
    const text =
      file === '-'
        ? await readStdin()
        : await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
            throw new UsageError(`cannot read ${file}: ${error.code ?? error.message}`);
          });
    text.split('\n').forEach((line, index) => {
      if (line.trim()) items.push(parseItem(line, `${file} line ${index + 1}`));
    });
  }
  if (items.length === 0) throw new UsageError('give the items with --item JSON (repeatable) or --file items.jsonl');
  if (items.length > jobLimits.maxItems) throw new UsageError(`a job holds at most ${jobLimits.maxItems} items; got ${items.length}`);
  return items;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const summary = (job: BatchJob) =>
  `${job.job_id} ${job.status} ${job.operation} items ${job.progress.succeeded + job.progress.failed}/${job.progress.total}` +
  (job.progress.failed > 0 ? ` (${job.progress.failed} failed)` : '') +
  ` attempts ${job.attempts}/${job.max_attempts}` +
  (job.error ? ` error ${job.error.code}: ${job.error.message}` : '');

function renderResult(result: BatchJobResult): string {
  const lines = result.items.map((item) =>
    item.status === 'succeeded' ? `${item.index} ok ${JSON.stringify(item.result)}` : `${item.index} failed ${item.error.code}: ${item.error.message}`,
  );
  if (result.error) lines.push(`job failed ${result.error.code}: ${result.error.message}`);
  return lines.join('\n');
}

/** Polls until the job ends, with a progress line on stderr; exits 1 when it did not complete. */
async function waitFor(cli: CliContext, jobId: string): Promise<BatchJob> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  let last = '';
  try {
    const job = await cli.client().jobs.wait(jobId, {
      signal: stop.signal,
      onProgress: (current) => {
        const line = summary(current);
        if (line === last) return;
        last = line;
        if (cli.output.interactive) cli.output.progress(line);
        else cli.output.notice(line);
      },
    });
    if (cli.output.interactive) cli.output.stderr.write('\n');
    return job;
  } finally {
    process.off('SIGINT', onSignal);
  }
}

function failUnlessCompleted(job: BatchJob): void {
  if (job.status !== 'completed') throw new CliFailure(`job ${job.job_id} ${job.status}${job.error ? `: ${job.error.code}` : ''}`, { silent: false });
}

const listRow = (job: BatchJob) => [
  job.job_id,
  job.status,
  job.operation,
  `${job.progress.succeeded + job.progress.failed}/${job.progress.total}${job.progress.failed > 0 ? ` (${job.progress.failed} failed)` : ''}`,
  job.created_at,
];

/** `svc jobs submit|list|status|wait|cancel|result`: batch jobs of up to 8 items. */
export function registerJobsCommands(program: Command): void {
  const jobs = program.command('jobs').description(`Batch jobs: one operation over 1..${jobLimits.maxItems} items, run in the background`);

  jobs
    .command('submit')
    .description('Submit a job; prints it (or, with --wait, waits and prints its result)')
    .requiredOption('--op <operation>', `the operation: ${jobOperations.join(', ')}`)
    .option('--item <json...>', 'one item as JSON (repeatable), e.g. \'{"expression":"2^10"}\'', [])
    .option('--file <items.jsonl>', 'items as JSON Lines, one per line (- for stdin)')
    .option('--idempotency-key <key>', 'name this submission (default: a new UUID); the same key and items never queue a second job')
    .option('--wait', 'wait for the job to end and print its result')
    .action(
      withContext(async (cli, flags: { op: string; item: string[]; file?: string; idempotencyKey?: string; wait?: boolean }) => {
        if (!(jobOperations as readonly string[]).includes(flags.op))
          throw new UsageError(`unknown operation ${flags.op}; operations: ${jobOperations.join(', ')}`);
        const request = {
          schema: batchJobRequestSchemaId,
          operation: flags.op as JobOperation,
          items: await readItems(flags.item, flags.file),
        } as BatchJobRequest;
        const idempotencyKey = flags.idempotencyKey ?? crypto.randomUUID();
        const job = await cli.client().jobs.submit(request, { idempotencyKey });
        if (!flags.wait) {
          cli.output.result(job, (data) => `${summary(data)}\nidempotency key ${idempotencyKey}`);
          return;
        }
        const ended = await waitFor(cli, job.job_id);
        if (ended.status === 'cancelled') {
          cli.output.result(ended, summary);
          failUnlessCompleted(ended);
        }
        const result = await cli.client().jobs.result({ params: { job_id: job.job_id } });
        cli.output.result(result, renderResult);
        failUnlessCompleted(ended);
      }),
    );

  cursorListOptions(
    jobs
      .command('list')
      .description('Your jobs still kept (active, and finished ones until their retention ends), newest first')
      .option('--status <status>', `only jobs in this status: ${jobStatuses.join(', ')}`),
    jobsContract.list,
    'jobs',
  ).action(
    withContext(async (cli, flags: CursorListFlags & { status?: string }) => {
      if (flags.status !== undefined && !(jobStatuses as readonly string[]).includes(flags.status))
        throw new UsageError(`unknown status ${flags.status}; statuses: ${jobStatuses.join(', ')}`);
      await printCursorList(cli, jobsContract.list, flags, {
        method: cli.client().jobs.list,
        filters: { status: flags.status as JobStatus | undefined },
        header: ['ID', 'STATUS', 'OPERATION', 'ITEMS', 'CREATED'],
        row: listRow,
        empty: 'No jobs.',
      });
    }),
  );

  jobs
    .command('status')
    .description("A job's status, attempts and per-item progress")
    .argument('<job_id>')
    .action(
      withContext(async (cli, jobId: string) => {
        cli.output.result(await cli.client().jobs.get({ params: { job_id: jobId } }), (job) =>
          [summary(job), ...job.items.map((item) => `  item ${item.index} ${item.status}${item.error_code ? ` ${item.error_code}` : ''}`)].join('\n'),
        );
      }),
    );

  jobs
    .command('wait')
    .description('Wait for a job to end (progress on stderr); exits 1 unless it completed')
    .argument('<job_id>')
    .action(
      withContext(async (cli, jobId: string) => {
        const job = await waitFor(cli, jobId);
        cli.output.result(job, summary);
        failUnlessCompleted(job);
      }),
    );

  jobs
    .command('cancel')
    .description('Cancel a queued job (a job already running or finished cannot be cancelled)')
    .argument('<job_id>')
    .action(
      withContext(async (cli, jobId: string) => {
        cli.output.result(await cli.client().jobs.cancel({ params: { job_id: jobId } }), summary);
      }),
    );

  jobs
    .command('result')
    .description('Per-item results of a finished job')
    .argument('<job_id>')
    .action(
      withContext(async (cli, jobId: string) => {
        cli.output.result(await cli.client().jobs.result({ params: { job_id: jobId } }), renderResult);
      }),
    );
}
