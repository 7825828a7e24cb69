import { MultiBar, Presets, type SingleBar } from 'cli-progress';
import { Option, type Command } from 'commander';
import { tools } from '@svc/schemas';
import { loopbackServerStore, VerifiedDownloadError } from '@svc/client';
import { withContext } from '../context.ts';
import { CliFailure } from '../failure.ts';
import { table } from '../output.ts';
import { bytes, intArg } from './catalog.ts';

interface DownloadFlags {
  out?: string;
  tool?: string;
  storageHost: string[];
  allowHttpLoopback?: boolean;
  strictStorage?: boolean;
  concurrency?: number;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * `svc download <artifact> [path...]`: verified download of a plan's files. A progress bar per
 * file on a terminal (bytes, rate, ETA), plain lines otherwise; a summary of verified digests;
 * exit 1 when any file fails a check.
 */
export function registerDownloadCommands(program: Command): void {
  program
    .command('download')
    .description('Download hosted files of an artifact, each verified against its planned SHA-256 and size before it is published')
    .argument('<artifact>', 'artifact id')
    .argument('[paths...]', 'only these files (default: the whole plan)')
    .option('--out <dir>', 'directory to write into (default: ./<artifact>)')
    .addOption(new Option('--tool <tool>', 'only the files this runtime needs').choices(tools))
    .option('--storage-host <host[:port]>', 'also trust this object-storage host (repeatable; SVC_STORAGE_HOSTS adds more)', collect, [])
    .option('--allow-http-loopback', 'accept plain HTTP from an allowed store on a loopback address (self-hosted svc)')
    .option('--strict-storage', "do not trust a loopback server's own built-in store by default; only storage.googleapis.com and --storage-host")
    .option('--concurrency <n>', 'files at once (1..16, default 4)', intArg('--concurrency'))
    .action(
      withContext(async (cli, artifactId: string, paths: string[], flags: DownloadFlags) => {
        const destination = flags.out ?? artifactId;
        const interactive = cli.output.interactive && !cli.output.json;
        const bars = interactive
          ? new MultiBar({ stream: cli.output.stderr as NodeJS.WriteStream, format: ' {bar} {percentage}% | {file} | {value}/{total} B | {rate} | ETA {eta_formatted}', hideCursor: true, clearOnComplete: false, stopOnComplete: false }, Presets.shades_classic)
          : undefined;
        const perFile = new Map<string, { bar?: SingleBar; started: number }>();
        const client = cli.client();
        // A self-hosted server on this machine serves its files from its own origin: trusted by
        // default, and said so, so nobody wonders why plain HTTP was accepted.
        const ownStore = flags.strictStorage ? undefined : loopbackServerStore(client.apiUrl);
        if (ownStore && !cli.output.json) cli.output.notice(`trusting the loopback server's own store ${ownStore} (--strict-storage to refuse it)`);
        const result = await client.catalog.downloadArtifact({
          artifactId,
          destination,
          paths: paths.length ? paths : undefined,
          tool: (flags.tool ?? null) as never,
          concurrency: flags.concurrency,
          policy: { hosts: flags.storageHost, allowHttpLoopback: Boolean(flags.allowHttpLoopback), trustLoopbackServerStore: !flags.strictStorage },
          onFileStart(file) {
            const bar = bars?.create(file.sizeBytes, 0, { file: file.path, rate: '-' });
            perFile.set(file.path, { bar, started: performance.now() });
            if (!bars && !cli.output.json) cli.output.notice(`downloading ${file.path} (${file.sizeBytes} bytes)`);
          },
          onProgress(progress) {
            const state = perFile.get(progress.path);
            if (!state?.bar) return;
            const seconds = (performance.now() - state.started) / 1000;
            state.bar.update(progress.receivedBytes, { rate: seconds > 0 ? `${bytes(progress.receivedBytes / seconds)}/s` : '-' });
          },
          onFileDone({ path, file, error }) {
            if (!bars && !cli.output.json) cli.output.notice(file ? `verified ${path} sha256:${file.sha256} (${file.completion.status})` : `FAILED ${path}: ${error!.message}`);
          },
        }).finally(() => bars?.stop());
        const summary = {
          artifactId: result.artifactId,
          revision: result.revision,
          ok: result.ok,
          files: result.files.map((file) => ({ path: file.path, destination: file.destination, sha256: file.sha256, sizeBytes: file.sizeBytes, status: file.completion.status })),
          failures: result.failures.map((failure) => ({
            path: failure.path,
            check: failure.error instanceof VerifiedDownloadError ? failure.error.check : 'error',
            message: failure.error.message,
          })),
        };
        cli.output.result(summary, (s) =>
          [
            `${s.artifactId} revision ${s.revision}: ${s.files.length} verified, ${s.failures.length} failed`,
            s.files.length ? table([['VERIFIED', 'SHA256', 'BYTES', 'PULL'], ...s.files.map((file) => [file.path, file.sha256, String(file.sizeBytes), file.status])]) : '',
            ...s.failures.map((failure) => `FAILED ${failure.path} [${failure.check}]: ${failure.message}`),
          ]
            .filter(Boolean)
            .join('\n'),
        );
        if (!result.ok) throw new CliFailure(`${result.failures.length} file(s) failed verification`, { silent: cli.output.json });
      }),
    );
}
