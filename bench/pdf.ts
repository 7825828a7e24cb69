/**
 * PDF extraction throughput: pages per second through the full HTTP upload path (client ->
 * POST /v1/pdf/extract/upload -> parser pool -> JSON) with the configured engine, against
 * poppler's `pdftotext` on the same files and the same pages (the first 32 of each) in the same
 * run: pdftotext with the same parallelism (two processes for two workers) and with one
 * process (how its pages/s are usually quoted). Also reports
 * the peak memory of a parser worker (V8 heap plus external buffers, as the worker measures it)
 * and the peak RSS of the whole server process.
 *
 * Run: pnpm bench:pdf [-- --engine pdfium|pdfjs|mupdf --rounds 5 --concurrency 2]
 * Needs the Debian documentation corpus (fetched by scripts/fetch-pdf-corpus.sh) and
 * poppler-utils (installed with apt-get when missing).
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { createLogger, createServer, loadConfig } from '@svc/server';
import { reportFigures } from './report.ts';
import { median } from './stats.ts';
import { benchArguments } from './args.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  args: benchArguments(),
  options: {
    engine: { type: 'string', default: 'pdfium' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '2' },
    'max-pages': { type: 'string', default: '32' },
  },
});
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const maxPages = Number(values['max-pages']);

function ensurePdftotext(): void {
  try {
    execFileSync('pdftotext', ['-v'], { stdio: 'ignore' });
  } catch {
    process.stderr.write('pdftotext missing: installing poppler-utils with apt-get\n');
    const asRoot = process.getuid?.() === 0;
    execFileSync(asRoot ? 'apt-get' : 'sudo', [...(asRoot ? [] : ['-n', 'apt-get']), 'install', '-y', '-qq', 'poppler-utils'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  }
}

function corpus(): string[] {
  execFileSync(path.join(ROOT, 'scripts/fetch-pdf-corpus.sh'), { stdio: ['ignore', 'ignore', 'inherit'] });
  const directory = path.join(ROOT, '.cache/pdf-corpus');
  return readdirSync(directory)
    .filter((name) => name.endsWith('.pdf'))
    .sort()
    .map((name) => path.join(directory, name));
}

/** Runs `task` over `items` with `callers` in parallel; answers wall-clock seconds. */
async function timed<T>(items: T[], task: (item: T) => Promise<void>, callers = concurrency): Promise<number> {
  const queue = [...items];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await task(item);
    }),
  );
  return (performance.now() - started) / 1000;
}

ensurePdftotext();
const files = corpus();
const bytes = new Map<string, Uint8Array<ArrayBuffer>>();
for (const file of files) bytes.set(file, new Uint8Array(await readFile(file)));

// The server's own log lines carry each parse's peak worker memory.
let peakWorkerBytes = 0;
const logSink = new Writable({
  write(chunk: Buffer, _encoding, callback) {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.includes('"pdf parsed"')) continue;
      peakWorkerBytes = Math.max(peakWorkerBytes, JSON.parse(line).peakHeapBytes ?? 0);
    }
    callback();
  },
});
const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-pdf-'));
const server = await createServer(
  loadConfig({
    SVC_PORT: '0',
    SVC_DATA_DIR: dataDir,
    SVC_PDF_ENGINE: values.engine,
    SVC_PDF_RATE_LIMIT: '0',
    SVC_PDF_MAX_PENDING: String(concurrency * 2),
    SVC_OPERATOR_TOKEN: 'bench-operator-token-0123456789',
  }),
  { logger: createLogger('debug', logSink) },
);
const { baseUrl } = await server.listen();
let peakRss = 0;
const rssSampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);

const pagesOf = new Map<string, number>();
const failures: string[] = [];
async function upload(file: string): Promise<void> {
  const response = await fetch(`${baseUrl}/v1/pdf/extract/upload?max_pages=${maxPages}&max_chars=400000`, {
    method: 'POST',
    headers: { authorization: 'Bearer bench-operator-token-0123456789', 'content-type': 'application/pdf' },
    body: bytes.get(file)!,
  });
  const body = (await response.json()) as { pages_returned?: number; code?: string };
  if (response.status !== 200) failures.push(`${path.basename(file)}: ${response.status} ${body.code}`);
  pagesOf.set(file, body.pages_returned ?? 0);
}
async function pdftotext(file: string): Promise<void> {
  await run('pdftotext', ['-q', '-f', '1', '-l', String(maxPages), '-enc', 'UTF-8', file, '-'], { maxBuffer: 64 * 1024 * 1024 });
}

await timed(files, upload); // warm-up round: JIT, fonts, page counts
const totalPages = files.reduce((sum, file) => sum + (pagesOf.get(file) ?? 0), 0);
const serverSeconds: number[] = [];
const popplerSeconds: number[] = [];
const popplerSingleSeconds: number[] = [];
for (let round = 0; round < rounds; round += 1) {
  serverSeconds.push(await timed(files, upload));
  popplerSeconds.push(await timed(files, pdftotext));
  popplerSingleSeconds.push(await timed(files, pdftotext, 1));
}
clearInterval(rssSampler);
await server.close();
await rm(dataDir, { recursive: true, force: true });

// Each round runs svc, then pdftotext with the same parallelism, then with one process: a
// round's ratio compares runs taken seconds apart, and the reported ratio is the median of the
// rounds' ratios, so a burst of load on a shared machine moves one ratio, not the result.
const serverRate = totalPages / median(serverSeconds);
const popplerRate = totalPages / median(popplerSeconds);
const popplerSingleRate = totalPages / median(popplerSingleSeconds);
const pairRatio = median(serverSeconds.map((seconds, round) => popplerSeconds[round]! / seconds));
const singleRatio = median(serverSeconds.map((seconds, round) => popplerSingleSeconds[round]! / seconds));
const mib = (value: number) => `${(value / 1024 / 1024).toFixed(0)} MiB`;
process.stdout.write(
  [
    `pdf bench: ${files.length} files, ${totalPages} pages (first ${maxPages} of each), concurrency ${concurrency}, median of ${rounds} rounds`,
    `  svc upload (${values.engine}): ${serverRate.toFixed(0)} pages/s  (${serverSeconds.map((s) => s.toFixed(2)).join(' / ')} s)`,
    `  pdftotext, ${concurrency} processes: ${popplerRate.toFixed(0)} pages/s  (${popplerSeconds.map((s) => s.toFixed(2)).join(' / ')} s)`,
    `  pdftotext, 1 process:   ${popplerSingleRate.toFixed(0)} pages/s  (${popplerSingleSeconds.map((s) => s.toFixed(2)).join(' / ')} s)`,
    `  ratio svc/pdftotext (median of rounds): ${pairRatio.toFixed(2)}x against ${concurrency} processes, ${singleRatio.toFixed(2)}x against 1 (target >= 0.90x)`,
    `  peak parser worker memory: ${mib(peakWorkerBytes)} (cap ${mib(805306368)}); peak server process RSS: ${mib(peakRss)}`,
    ...(failures.length ? [`  failures: ${[...new Set(failures)].join('; ')}`] : []),
    '',
  ].join('\n'),
);
reportFigures('pdf', [
  {
    figure: `pages/s vs pdftotext x${concurrency} (${values.engine})`,
    svc: serverRate,
    baseline: popplerRate,
    unit: 'pages/s',
    ratio: pairRatio,
    target: { on: 'ratio', op: '>=', value: 0.9 },
    note: `${singleRatio.toFixed(2)}x against one pdftotext process; peak parser worker ${mib(peakWorkerBytes)}, peak server RSS ${mib(peakRss)}${failures.length ? `; failures: ${[...new Set(failures)].join('; ')}` : ''}`,
  },
  { figure: 'peak parser worker memory', svc: peakWorkerBytes / 1048576, unit: 'MiB', target: { on: 'svc', op: '<', value: 805306368 / 1048576 } },
]);
