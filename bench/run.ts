/**
 * `pnpm bench [name...]`: runs every bench (each `bench:<name>` script of the root package.json,
 * in that order) or the ones named, each as its own process so one bench's memory and threads
 * never weigh on the next, then prints one table: figure, svc, baseline, ratio, target, met,
 * and the load average each figure was taken at, with the core count. The figures come from
 * the benches themselves through bench/report.ts; the same table is written as JSON to
 * bench/results/latest.json (git-ignored), the last local run of the protocol that
 * /.well-known/performance.json describes.
 *
 * Benches that need PostgreSQL get BENCH_DATABASE_URL (default: the local server's `postgres`
 * database, where they create and drop a scratch database); the others run on the embedded
 * database unless BENCH_DATABASE_URL is already set in the environment.
 *
 * Exit status: 1 when a bench failed to run; a missed target is reported, not an error.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeTarget, type ReportedFigure } from './report.ts';
import { benchArguments } from './args.ts';

const root = new URL('..', import.meta.url).pathname;
const NEEDS_POSTGRES = new Set(['blackboard', 'jobs', 'keyed-transactions']);
const DEFAULT_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

interface BenchRun {
  name: string;
  exitCode: number | null;
  seconds: number;
  figures: ReportedFigure[];
}

/** The benches, in the order of their `bench:<name>` scripts, each with its file. */
async function listBenches(): Promise<Map<string, string>> {
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const benches = new Map<string, string>();
  for (const [script, command] of Object.entries(manifest.scripts)) {
    const match = /^bench:(.+)$/.exec(script);
    const file = /\bbench\/[\w-]+\.ts\b/.exec(command)?.[0];
    if (match && file) benches.set(match[1]!, file);
  }
  return benches;
}

async function runBench(name: string, file: string, reportDir: string): Promise<BenchRun> {
  const reportFile = join(reportDir, `${name}.jsonl`);
  const env: NodeJS.ProcessEnv = { ...process.env, SVC_BENCH_REPORT: reportFile };
  if (NEEDS_POSTGRES.has(name)) env.BENCH_DATABASE_URL ??= DEFAULT_POSTGRES;
  process.stdout.write(`\n== bench ${name} (${file}), load ${formatLoad(loadavg())}\n`);
  const started = performance.now();
  const child = spawn(process.execPath, [file], { cwd: root, env, stdio: 'inherit' });
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ? null : code)));
  const seconds = (performance.now() - started) / 1000;
  const figures = await readFile(reportFile, 'utf8').then(
    (text) =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ReportedFigure),
    () => [] as ReportedFigure[],
  );
  return { name, exitCode, seconds, figures };
}

const formatLoad = (load: number[]) => load.map((value) => value.toFixed(2)).join(' ');

/** A number with three significant digits, enough for a ratio or a latency, without noise. */
function formatNumber(value: number | undefined, unit = ''): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits)}${unit ? ` ${unit}` : ''}`;
}

function table(runs: BenchRun[]): string {
  const header = ['bench', 'figure', 'svc', 'baseline', 'ratio', 'target', 'met', 'load (1 min)'];
  const rows: string[][] = [];
  for (const run of runs) {
    if (run.exitCode !== 0 && run.figures.length === 0)
      rows.push([run.name, `did not run to the end (exit ${run.exitCode ?? 'signal'})`, '', '', '', '', 'no', '']);
    for (const figure of run.figures) {
      rows.push([
        run.name,
        figure.figure,
        formatNumber(figure.svc, figure.unit),
        formatNumber(figure.baseline, figure.unit),
        figure.ratio === undefined ? '-' : `${formatNumber(figure.ratio)}x`,
        describeTarget(figure.target, figure.unit),
        figure.met === undefined ? '-' : figure.met ? 'yes' : 'NO',
        figure.load[0]?.toFixed(2) ?? '-',
      ]);
    }
  }
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

const args = benchArguments();
const benches = await listBenches();
const unknown = args.filter((name) => !benches.has(name));
if (unknown.length > 0) {
  process.stderr.write(`unknown bench ${unknown.join(', ')}; the benches are: ${[...benches.keys()].join(', ')}\n`);
  process.exit(2);
}
const selected = args.length > 0 ? args : [...benches.keys()];
const reportDir = await mkdtemp(join(tmpdir(), 'svc-bench-'));
const loadAtStart = loadavg();
const startedAt = new Date();
const runs: BenchRun[] = [];
try {
  for (const name of selected) runs.push(await runBench(name, benches.get(name)!, reportDir));
} finally {
  await rm(reportDir, { recursive: true, force: true });
}
const loadAtEnd = loadavg();

const machine = `${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown cpu'}), node ${process.version}`;
process.stdout.write(
  [
    '',
    `svc benchmarks, ${startedAt.toISOString()}, ${machine}`,
    `load average (1, 5, 15 min) at start ${formatLoad(loadAtStart)}, at end ${formatLoad(loadAtEnd)}`,
    '',
    table(runs),
    '',
    ...runs.flatMap((run) => run.figures.filter((figure) => figure.note).map((figure) => `${run.name}, ${figure.figure}: ${figure.note}`)),
    '',
  ].join('\n'),
);

const resultsDir = join(root, 'bench', 'results');
await mkdir(resultsDir, { recursive: true });
const results = {
  protocol: 'svc.performance.v1',
  started_at: startedAt.toISOString(),
  finished_at: new Date().toISOString(),
  machine: { cores: availableParallelism(), cpu: cpus()[0]?.model.trim() ?? null, node: process.version, platform: `${process.platform}-${process.arch}` },
  load_average: { start: loadAtStart, end: loadAtEnd },
  benches: runs.map(({ name, exitCode, seconds, figures }) => ({ name, exit_code: exitCode, seconds: Number(seconds.toFixed(1)), figures })),
};
await writeFile(join(resultsDir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(`results written to bench/results/latest.json\n`);
process.exitCode = runs.some((run) => run.exitCode !== 0 && run.figures.length === 0) ? 1 : 0;
