/**
 * Verified download throughput against a plain fetch-to-file of the same bytes, same run, same
 * server: a 256 MiB hosted file in the built-in object store, fetched over loopback.
 *
 *   pnpm bench:download            (BENCH_DOWNLOAD_MIB=64 for a quicker run, BENCH_ROUNDS=9 pairs)
 *
 * Baseline: GET the download path (redirect not followed), then GET the signed URL and pipe the
 * body into a file. Verified: client.catalog.verifiedDownload, which adds the plan, the policy
 * checks, streaming SHA-256, the size checks, the completion call and the atomic rename.
 *
 * The two run in alternating pairs (the order flips each pair) and the ratio is the median of the
 * per-pair ratios, so a burst of noise on a shared machine hits both sides of one pair rather than
 * the result. Beside throughput: CPU time per MiB of this (client) process, all threads, and of
 * the server process, which a busy machine disturbs less than wall time.
 *
 * Then the CLI as a user runs it against what a user would do by hand (issue 44): `svc download`
 * (a new process: start-up, plan, fetch, SHA-256, completion, rename) against `curl -L -o` of the
 * download path followed by `sha256sum`, in alternating pairs (BENCH_CLI_ROUNDS, 3 by default);
 * target at least 0.9x on a 400 MiB file (--mib 400). The CLI is the published bin (dist/bin.js,
 * the bundle `npm i @svc/cli` installs), built here from the sources into a folder laid out as an
 * install, as bench/cli-start.ts does.
 *
 * Run: pnpm bench:download [-- --mib 400 --rounds 9 --cli-rounds 3]; `-- --help` lists the options.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createClient } from '@svc/client';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { parseArgs, promisify } from 'node:util';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { SERVER_BIN } from '@svc/testing/server-process';
import { buildInstalledBin } from '../packages/cli/scripts/bin-build.ts';
import { benchArguments } from './args.ts';
import { reportFigures } from './report.ts';
import { median } from './stats.ts';

const out = (line: string) => process.stdout.write(`${line}\n`);
const USAGE = `Usage: pnpm bench:download [-- options]

  -m, --mib <n>         size of the file in MiB (default 256, or BENCH_DOWNLOAD_MIB; the issue-44 figure: 400)
  -r, --rounds <n>      alternating pairs of verifiedDownload and a plain fetch (default 9, or BENCH_ROUNDS)
  -c, --cli-rounds <n>  alternating pairs of svc download and curl + sha256sum (default 3, or BENCH_CLI_ROUNDS)
  -h, --help            print this

A smoke run: pnpm bench:download -- -m 16 -r 1 -c 1`;
const { values } = parseArgs({
  args: benchArguments(),
  options: {
    mib: { type: 'string', short: 'm' },
    rounds: { type: 'string', short: 'r' },
    'cli-rounds': { type: 'string', short: 'c' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  out(USAGE);
  process.exit(0);
}
/** A positive whole number from an option, else its variable, else the default; anything else stops the bench with its usage. */
function count(option: string | undefined, variable: string, fallback: number): number {
  const text = option ?? process.env[variable];
  if (text === undefined) return fallback;
  if (!/^[1-9]\d*$/.test(text)) {
    process.stderr.write(`error: expected a positive whole number, not ${JSON.stringify(text)}\n\n${USAGE}\n`);
    process.exit(2);
  }
  return Number(text);
}
const MIB = 1024 * 1024;
const sizeMiB = count(values.mib, 'BENCH_DOWNLOAD_MIB', 256);
const rounds = count(values.rounds, 'BENCH_ROUNDS', 9);
const cliRounds = count(values['cli-rounds'], 'BENCH_CLI_ROUNDS', 3);
const runFile = promisify(execFile);
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

/** CPU time (ms) of every live thread of a process, from Linux schedstat (ns); 0 where /proc is absent. */
async function processCpuMs(pid: number): Promise<number> {
  try {
    const threads = await readdir(`/proc/${pid}/task`);
    const times = await Promise.all(
      threads.map((thread) =>
        readFile(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').then(
          (line) => Number(line.split(' ')[0]),
          () => 0,
        ),
      ),
    );
    return times.reduce((sum, nanoseconds) => sum + nanoseconds, 0) / 1e6;
  } catch {
    return 0;
  }
}

interface Run {
  seconds: number;
  /** This process's CPU (user + system, all threads) per MiB, in ms. */
  clientCpuPerMiB: number;
  serverCpuPerMiB: number;
}

const work = await mkdtemp(path.join(tmpdir(), 'svc-bench-download-'));
try {
  const CLI_BIN = await buildInstalledBin(path.join(work, 'installed-cli'));
  const source = path.join(work, 'weights.bin');
  const writer = createWriteStream(source);
  for (let written = 0; written < sizeMiB; written++)
    if (!writer.write(randomBytes(MIB))) await new Promise<void>((resolve) => writer.once('drain', () => resolve()));
  await new Promise<void>((resolve, reject) => writer.end((error?: Error | null) => (error ? reject(error) : resolve())));
  const catalog = path.join(work, 'catalog.jsonl');
  await writeFile(
    catalog,
    [
      { kind: 'artifact', id: 'bench-weights', name: 'Bench weights', type: 'model', license: 'mit', hosting: 'hosted', source: 'upload' },
      { kind: 'version', artifactId: 'bench-weights', revision: 'v1' },
      { kind: 'file', artifactId: 'bench-weights', revision: 'v1', path: 'weights.bin', contentFile: 'weights.bin' },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n'),
  );
  // The server runs in its own process, as it would in use, so client and server do not share a thread.
  const serverEnv = { ...process.env, SVC_HOST: '127.0.0.1', SVC_DATA_DIR: path.join(work, 'data'), SVC_LOG_LEVEL: 'warn', SVC_CATALOG_DEMO: 'off' };
  const imported = spawn(process.execPath, [SERVER_BIN, 'catalog', 'import', catalog], { env: serverEnv, stdio: ['ignore', 'ignore', 'inherit'] });
  if ((await new Promise<number | null>((resolve) => imported.on('close', resolve))) !== 0) throw new Error('catalog import failed');
  const port = await new Promise<number>((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const apiUrl = `http://127.0.0.1:${port}`;
  const server: ChildProcess = spawn(process.execPath, [SERVER_BIN, 'start'], { env: { ...serverEnv, SVC_PORT: String(port) }, stdio: 'inherit' });
  for (let attempt = 0; ; attempt++) {
    if (
      await fetch(`${apiUrl}/healthz`).then(
        (response) => response.ok,
        () => false,
      )
    )
      break;
    if (attempt > 300) throw new Error('the server did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  try {
    const client = createClient({ apiUrl, baseUrl: apiUrl, retry: 0, storagePolicy: { hosts: [new URL(apiUrl).host], allowHttpLoopback: true } });
    const plainFetch = async (destination: string) => {
      const redirect = await fetch(`${apiUrl}/api/downloads/bench-weights/weights.bin`, { redirect: 'manual' });
      const response = await fetch(redirect.headers.get('location')!);
      await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>), createWriteStream(destination));
    };
    const verified = async (destination: string) => {
      await client.catalog.verifiedDownload({ artifactId: 'bench-weights', path: 'weights.bin', destination });
    };
    const time = async (run: (destination: string) => Promise<void>, name: string): Promise<Run> => {
      const destination = path.join(work, `${name}.bin`);
      const serverBefore = await processCpuMs(server.pid!);
      const clientBefore = process.cpuUsage();
      const started = performance.now();
      await run(destination);
      const seconds = (performance.now() - started) / 1000;
      const client = process.cpuUsage(clientBefore);
      const serverMs = (await processCpuMs(server.pid!)) - serverBefore;
      if ((await stat(destination)).size !== sizeMiB * MIB) throw new Error(`${name} wrote the wrong size`);
      await rm(destination);
      return { seconds, clientCpuPerMiB: (client.user + client.system) / 1000 / sizeMiB, serverCpuPerMiB: serverMs / sizeMiB };
    };
    await time(plainFetch, 'warm-plain');
    await time(verified, 'warm-verified');
    const plain: Run[] = [];
    const checked: Run[] = [];
    const ratios: number[] = [];
    out(`download bench: ${sizeMiB} MiB from the built-in store over loopback, server in its own process; ${rounds} alternating pairs; load ${load()}`);
    for (let round = 0; round < rounds; round++) {
      const verifiedFirst = round % 2 === 1;
      const first = verifiedFirst ? await time(verified, 'verified') : await time(plainFetch, 'plain');
      const second = verifiedFirst ? await time(plainFetch, 'plain') : await time(verified, 'verified');
      const [ours, theirs] = verifiedFirst ? [first, second] : [second, first];
      checked.push(ours);
      plain.push(theirs);
      ratios.push(theirs.seconds / ours.seconds);
      out(
        `  pair ${round + 1}: verified ${(sizeMiB / ours.seconds).toFixed(0)} MiB/s (client ${ours.clientCpuPerMiB.toFixed(2)} ms CPU/MiB, server ${ours.serverCpuPerMiB.toFixed(2)}), ` +
          `plain ${(sizeMiB / theirs.seconds).toFixed(0)} MiB/s (client ${theirs.clientCpuPerMiB.toFixed(2)}, server ${theirs.serverCpuPerMiB.toFixed(2)}), ratio ${(theirs.seconds / ours.seconds).toFixed(2)}`,
      );
    }
    const rate = (runs: Run[]) => median(runs.map((run) => sizeMiB / run.seconds));
    const cpu = (runs: Run[], side: 'clientCpuPerMiB' | 'serverCpuPerMiB') => median(runs.map((run) => run[side]));
    const ratio = median(ratios);
    out(
      `plain fetch-to-file:  ${rate(plain).toFixed(1)} MiB/s median; client ${cpu(plain, 'clientCpuPerMiB').toFixed(2)} ms CPU/MiB, server ${cpu(plain, 'serverCpuPerMiB').toFixed(2)} ms CPU/MiB`,
    );
    out(
      `verified download:    ${rate(checked).toFixed(1)} MiB/s median; client ${cpu(checked, 'clientCpuPerMiB').toFixed(2)} ms CPU/MiB, server ${cpu(checked, 'serverCpuPerMiB').toFixed(2)} ms CPU/MiB`,
    );
    out(`ratio verified/plain: ${ratio.toFixed(2)}x (median of ${rounds} pairs; target >= 0.95x ${ratio >= 0.95 ? 'met' : 'NOT met'}); load ${load()}`);
    reportFigures('download', [
      {
        figure: `verified download, ${sizeMiB} MiB`,
        svc: Number(rate(checked).toFixed(1)),
        baseline: Number(rate(plain).toFixed(1)),
        unit: 'MiB/s',
        ratio: Number(ratio.toFixed(3)),
        target: { on: 'ratio', op: '>=', value: 0.95 },
        note: `median of ${rounds} alternating pairs; client CPU per MiB verified ${cpu(checked, 'clientCpuPerMiB').toFixed(2)} ms, plain ${cpu(plain, 'clientCpuPerMiB').toFixed(2)} ms`,
      },
      {
        figure: 'download client CPU per MiB',
        svc: Number(cpu(checked, 'clientCpuPerMiB').toFixed(3)),
        baseline: Number(cpu(plain, 'clientCpuPerMiB').toFixed(3)),
        unit: 'ms/MiB',
        ratio: Number(median(checked.map((run, index) => plain[index]!.clientCpuPerMiB / run.clientCpuPerMiB)).toFixed(3)),
        note: `client process, all threads; server ${cpu(checked, 'serverCpuPerMiB').toFixed(2)} ms/MiB verified, ${cpu(plain, 'serverCpuPerMiB').toFixed(2)} plain`,
      },
    ]);

    // The CLI as a process against curl and sha256sum, the worse of the two sides' medians reported.
    const cliEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
    const cliDownload = async (destination: string) => {
      const folder = `${destination}.d`;
      await runFile(process.execPath, [CLI_BIN, 'download', 'bench-weights', 'weights.bin', '--out', folder, '--allow-http-loopback', '--quiet', '--force'], {
        env: { ...cliEnv, SVC_BASE_URL: apiUrl },
        maxBuffer: 1 << 20,
      });
      const [file] = await readdir(folder, { recursive: true }).then((names) => names.filter((name) => String(name).endsWith('weights.bin')));
      await rm(destination, { force: true });
      await import('node:fs/promises').then(({ rename }) => rename(path.join(folder, String(file)), destination));
      await rm(folder, { recursive: true, force: true });
    };
    const curlThenSha256sum = async (destination: string) => {
      await runFile('curl', ['-sSfL', '-o', destination, `${apiUrl}/api/downloads/bench-weights/weights.bin`]);
      await runFile('sha256sum', [destination]);
    };
    const wall = async (run: (destination: string) => Promise<void>, name: string): Promise<number> => {
      const destination = path.join(work, `${name}.bin`);
      const started = performance.now();
      await run(destination);
      const seconds = (performance.now() - started) / 1000;
      if ((await stat(destination)).size !== sizeMiB * MIB) throw new Error(`${name} wrote the wrong size`);
      await rm(destination);
      return seconds;
    };
    const cliTimes: number[] = [];
    const curlTimes: number[] = [];
    out(`svc download (a new process, the published bin) against curl -L -o then sha256sum: ${sizeMiB} MiB, ${cliRounds} alternating pairs; load ${load()}`);
    for (let round = 0; round < cliRounds; round++) {
      const cliFirst = round % 2 === 0;
      const first = cliFirst ? await wall(cliDownload, 'cli') : await wall(curlThenSha256sum, 'curl');
      const second = cliFirst ? await wall(curlThenSha256sum, 'curl') : await wall(cliDownload, 'cli');
      const [ours, theirs] = cliFirst ? [first, second] : [second, first];
      cliTimes.push(ours);
      curlTimes.push(theirs);
      out(`  pair ${round + 1}: svc download ${ours.toFixed(2)} s, curl + sha256sum ${theirs.toFixed(2)} s, ratio ${(theirs / ours).toFixed(2)}`);
    }
    const cliRatio = median(curlTimes) / median(cliTimes);
    out(
      `svc download ${median(cliTimes).toFixed(2)} s median (worst ${Math.max(...cliTimes).toFixed(2)} s), curl + sha256sum ${median(curlTimes).toFixed(2)} s median; ratio ${cliRatio.toFixed(2)}x (target >= 0.9x ${cliRatio >= 0.9 ? 'met' : 'NOT met'}); load ${load()}`,
    );
    reportFigures('download', [
      {
        figure: `svc download against curl + sha256sum, ${sizeMiB} MiB`,
        svc: Number(median(cliTimes).toFixed(2)),
        baseline: Number(median(curlTimes).toFixed(2)),
        unit: 's',
        ratio: Number(cliRatio.toFixed(3)),
        target: { on: 'ratio', op: '>=', value: 0.9 },
        note: `median of ${cliRounds} alternating pairs; each side a new process; load ${load()}`,
      },
    ]);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('close', resolve));
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
