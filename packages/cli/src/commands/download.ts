import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import { Option, type Command } from 'commander';
import { catalogContract, tools } from '@svc/schemas';
import { loopbackServerStore, VerifiedDownloadError, type BlackboardPutResponse, type DownloadArtifactResult, type SvcClient } from '@svc/client';
import { withContext, type CliContext } from '../context.ts';
import { checkDownload } from './download-check.ts';
import { requestFrom } from '../contract-flags.ts';
import { CliFailure, UsageError } from '../failure.ts';
import { integerFlag } from '../input.ts';
import { table } from '../output.ts';
import { bytes } from './catalog.ts';
import { progressLine, type ProgressPayload } from '../progress-line.ts';

interface DownloadFlags {
  out?: string;
  force?: boolean;
  check?: boolean;
  tool?: string;
  storageHost: string[];
  allowHttpLoopback?: boolean;
  strictStorage?: boolean;
  concurrency?: string;
  postReceipt?: string;
  quiet?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * Posts each verified file's completion receipt under `key`. The idempotency key is the record's
 * own, so running the same download again (the same pull record) answers the first post instead
 * of posting twice.
 */
async function postReceipts(client: SvcClient, key: string, result: DownloadArtifactResult): Promise<PostedReceipt[]> {
  const posts: PostedReceipt[] = [];
  for (const file of result.files) {
    // A refused post (posting paused, a full window) is reported beside the verified files, which stay in place.
    const post = await client.blackboard
      .put({
        body: {
          key,
          idempotency_key: `download-completion:${file.completion.recordId}`,
          value: {
            text: `Downloaded and verified ${result.artifactId} ${file.path} (revision ${result.revision}): sha256 ${file.sha256}, ${file.sizeBytes} bytes.`,
            kind: 'result',
            artifact_id: result.artifactId,
            receipt: { jws: file.completion.receipt },
          },
        },
      })
      .then(
        (answer) => ({ post: answer, error: null }),
        (error: unknown) => ({ post: null, error: error instanceof Error ? error.message : String(error) }),
      );
    posts.push({ path: file.path, ...post });
  }
  return posts;
}

type PostedReceipt = { path: string } & ({ post: BlackboardPutResponse; error: null } | { post: null; error: string });

/** The exit code of a command stopped by SIGINT or SIGTERM (128 + SIGINT), as shells report it. */
const EXIT_INTERRUPTED = 130;
/**
 * The exit code when the only files not done are ones another download (another `svc download`
 * of the same files into the same folder) is writing: EX_TEMPFAIL of sysexits.h, "try again later".
 */
const EXIT_IN_USE = 75;

/**
 * Turns SIGINT and SIGTERM into an abort of the download: the caller stops its progress bars
 * (which shows the cursor again) and says how to resume. A second signal exits at once.
 */
function interruptOnSignal(cli: CliContext, onInterrupt: () => void): { signal: AbortSignal; interrupted: () => boolean; release: () => void } {
  const stop = new AbortController();
  const interrupt = () => {
    if (stop.signal.aborted) {
      process.exit(EXIT_INTERRUPTED);
    }
    onInterrupt();
    cli.output.notice('interrupted; run the same command to resume');
    stop.abort(new Error('interrupted'));
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  return {
    signal: stop.signal,
    interrupted: () => stop.signal.aborted,
    release: () => {
      process.off('SIGINT', interrupt);
      process.off('SIGTERM', interrupt);
    },
  };
}

/**
 * `svc download <artifact> [path...]`: verified download of a plan's files. A progress bar per
 * file on a terminal (bytes, rate, ETA), plain lines otherwise; a summary of verified digests;
 * exit 1 when any file fails a check. A file already up to date is skipped and a partial one
 * resumed (`--force` fetches again); `--check` compares without fetching. SIGINT or SIGTERM keeps
 * the partial files, shows the cursor again and exits 130.
 */
export function registerDownloadCommands(program: Command): void {
  program
    .command('download')
    .description('Download hosted files of an artifact, each verified against its planned SHA-256 and size before it is published')
    .argument('<artifact>', 'artifact id')
    .argument('[paths...]', 'only these files (default: the whole plan)')
    .option('--out <dir>', 'directory to write into (default: ./<artifact>)')
    .option('--force', 'fetch every file again, even one already up to date, and do not resume partial files')
    .option('--check', 'verify the local files against the catalog without fetching anything (exit 1 when any is missing or differs)')
    .addOption(new Option('--tool <tool>', 'only the files this runtime needs').choices(tools))
    .option('--storage-host <host[:port]>', 'also trust this object-storage host (repeatable; SVC_STORAGE_HOSTS adds more)', collect, [])
    .option('--allow-http-loopback', 'accept plain HTTP from an allowed store on a loopback address (self-hosted svc)')
    .option('--strict-storage', "do not trust a loopback server's own built-in store by default; only storage.googleapis.com and --storage-host")
    .option('--concurrency <n>', 'files at once (1..16, default 4)')
    .option('--quiet', 'no progress bars and no per-file notices (for scripts); the summary and failures still print')
    .option('--post-receipt <key>', "post each verified file's completion receipt to this blackboard channel (public!), so readers see receipt_verified")
    .action(
      withContext(async (cli, artifactId: string, paths: string[], flags: DownloadFlags) => {
        const destination = flags.out ?? artifactId;
        // The plan route's own query schema checks the runtime the plan is narrowed to.
        const tool = requestFrom(catalogContract.downloadPlan, 'query', { tool: flags.tool }).tool || null;
        if (flags.check) {
          if (flags.force) throw new UsageError('--check fetches nothing; --force does not apply.');
          return checkDownload(cli, { artifactId, destination, paths, tool });
        }
        // Progress goes to stderr whenever it is a terminal, with --json too (the JSON is stdout's);
        // --quiet (scripts) turns it off with the per-file notices.
        const quiet = Boolean(flags.quiet);
        const interactive = cli.output.interactive && !quiet;
        const bars = interactive
          ? new MultiBar(
              {
                stream: cli.output.stderr as NodeJS.WriteStream,
                format: (_options, params, payload) => progressLine(params, payload as ProgressPayload),
                hideCursor: true,
                clearOnComplete: false,
                stopOnComplete: false,
              },
              Presets.shades_classic,
            )
          : undefined;
        const perFile = new Map<string, { bar?: SingleBar; started: number; fromBytes?: number }>();
        let barsStopped = false;
        // Stopping the bars redraws them once and shows the cursor they hid.
        const stopBars = () => {
          if (barsStopped) return;
          barsStopped = true;
          bars?.stop();
        };
        const interrupt = interruptOnSignal(cli, stopBars);
        const client = cli.client();
        // A self-hosted server on this machine serves its files from its own origin: trusted by
        // default, and said so, so nobody wonders why plain HTTP was accepted.
        const ownStore = flags.strictStorage ? undefined : loopbackServerStore(client.apiUrl);
        if (ownStore && !cli.output.json) cli.output.notice(`trusting the loopback server's own store ${ownStore} (--strict-storage to refuse it)`);
        const result = await client.catalog
          .downloadArtifact({
            artifactId,
            destination,
            paths: paths.length ? paths : undefined,
            // The plan route's own query schema checks the runtime the plan is narrowed to.
            tool,
            force: Boolean(flags.force),
            signal: interrupt.signal,
            concurrency: integerFlag('--concurrency', flags.concurrency, { min: 1, max: 16 }),
            policy: { hosts: flags.storageHost, allowHttpLoopback: Boolean(flags.allowHttpLoopback), trustLoopbackServerStore: !flags.strictStorage },
            onFileStart(file) {
              const bar = bars?.create(file.sizeBytes, 0, { file: file.path } satisfies ProgressPayload);
              perFile.set(file.path, { bar, started: performance.now() });
              if (!bars && !cli.output.json && !quiet) cli.output.notice(`downloading ${file.path} (${bytes(file.sizeBytes)})`);
            },
            onLocalFile(local) {
              if (local.state === 'up-to-date') {
                const bar = perFile.get(local.path)?.bar;
                if (bar) bars?.remove(bar);
                perFile.delete(local.path);
                if (!quiet) cli.output.notice(`${local.path}: up to date`);
              } else if (local.state === 'differs') {
                cli.output.notice(`${local.path}: sha256 differs from the catalog; fetching again`);
              }
            },
            onProgress(progress) {
              const state = perFile.get(progress.path);
              if (!state?.bar) return;
              // A resumed file starts at the bytes it held: the rate counts from there.
              state.fromBytes ??= progress.receivedBytes;
              const seconds = (performance.now() - state.started) / 1000;
              const rate = (progress.receivedBytes - state.fromBytes) / seconds;
              // Under a quarter second the rate is noise: the line shows none (and no ETA) until then.
              state.bar.update(progress.receivedBytes, { file: progress.path, rate: seconds >= 0.25 ? rate : undefined } satisfies ProgressPayload);
            },
            onFileDone({ path, file, error }) {
              if (bars || cli.output.json || interrupt.interrupted() || file?.outcome === 'up-to-date' || (quiet && file)) return;
              cli.output.notice(
                file
                  ? `verified ${path} sha256:${file.sha256} (${file.outcome === 'resumed' ? 'resumed, ' : ''}${file.completion.status})`
                  : `FAILED ${path}: ${error!.message}`,
              );
            },
          })
          .finally(() => {
            stopBars();
            interrupt.release();
          });
        // The partial files stay for the next run, which resumes them; the notice said so.
        if (interrupt.interrupted()) throw new CliFailure('interrupted', { silent: true, exitCode: EXIT_INTERRUPTED });
        const posts = flags.postReceipt !== undefined ? await postReceipts(cli.client(), flags.postReceipt, result) : [];
        const summary = {
          artifactId: result.artifactId,
          revision: result.revision,
          ok: result.ok,
          files: result.files.map((file) => ({
            path: file.path,
            destination: file.destination,
            sha256: file.sha256,
            sizeBytes: file.sizeBytes,
            outcome: file.outcome,
            transferredBytes: file.transferredBytes,
            status: file.completion.status,
            recordId: file.completion.recordId,
            receipt: file.completion.receipt,
            ...(posts.length
              ? { post: posts.find((post) => post.path === file.path)?.post ?? null, postError: posts.find((post) => post.path === file.path)?.error ?? null }
              : {}),
          })),
          upToDate: result.upToDate.map((file) => ({ path: file.path, destination: file.destination, sha256: file.sha256, sizeBytes: file.sizeBytes })),
          failures: result.failures.map((failure) => ({
            path: failure.path,
            check: failure.error instanceof VerifiedDownloadError ? failure.error.check : 'error',
            message: failure.error.message,
          })),
        };
        cli.output.result(summary, (s) =>
          [
            `${s.artifactId} revision ${s.revision}: ${s.files.length} verified, ${s.failures.length} failed${s.upToDate.length ? `, ${s.upToDate.length} up to date` : ''}`,
            s.files.length
              ? table([['VERIFIED', 'SHA256', 'BYTES', 'PULL'], ...s.files.map((file) => [file.path, file.sha256, String(file.sizeBytes), file.status])])
              : '',
            ...posts.map(({ path, post, error }) =>
              post
                ? `posted the receipt of ${path} as ${post.id} under ${post.key}${post.receipt_verified ? ' (receipt verified)' : ''}`
                : `NOT POSTED the receipt of ${path}: ${error}`,
            ),
            ...s.failures.map((failure) => `FAILED ${failure.path} [${failure.check}]: ${failure.message}`),
          ]
            .filter(Boolean)
            .join('\n'),
        );
        if (!result.ok) {
          const inUse = result.failures.filter((failure) => failure.error instanceof VerifiedDownloadError && failure.error.check === 'locked').length;
          // Only files another download is writing: nothing is wrong with them, so try again later (not 1, which means a bad file).
          if (inUse === result.failures.length)
            throw new CliFailure(`${inUse} file(s) are being written by another download into ${destination}; run the same command again once it ends`, {
              silent: cli.output.json,
              exitCode: EXIT_IN_USE,
            });
          throw new CliFailure(`${result.failures.length} file(s) failed verification`, { silent: cli.output.json });
        }
        const unposted = posts.filter((post) => post.error !== null).length;
        if (unposted > 0) throw new CliFailure(`${unposted} receipt(s) could not be posted; the files are verified and in place`, { silent: cli.output.json });
      }),
    );
}
