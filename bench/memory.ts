/**
 * Memory of `svc-server start` as a process tree (the server and, on the embedded database,
 * its database process): at the peak of start-up (VmHWM of each process, summed), at idle once
 * start-up has settled (physical pages resident, each counted once, beside the RSS sum; VmRSS
 * sampled every 20 ms), once the first PDF request has started the parser workers, and during
 * and after a mixed load (blackboard puts and gets, catalog searches, embeddings, PDF
 * extractions). The embedded database runs on a fresh data directory, then again on the same
 * (existing) one; PostgreSQL (a scratch database on BENCH_DATABASE_URL) is the comparison row.
 * What each part costs is printed: the server process (with its main thread's V8 heap, from the
 * probe bench/memory-probe.ts), the database process (with its WebAssembly memory) and the PDF
 * workers (the server process after the first PDF minus before). Targets: idle under 300 MiB,
 * start-up peak under 500 MiB, both on the embedded database. Physical pages need root (page
 * frame numbers in /proc/<pid>/pagemap); without it the idle figure is the RSS sum.
 *
 * Run: pnpm bench:memory [-- --load 200]
 *   BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) for the PostgreSQL
 *   row; `--no-postgres` skips it.
 */
import type { ChildProcess } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startServerProcess } from '@svc/testing/server-process';
import { parseArgs } from 'node:util';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import type { ProbeAnswer } from './memory-probe.ts';
import { processTree, status, uniqueResidentBytes, wasmResidentBytes } from './process-memory.ts';
import { reportFigures, type Figure } from './report.ts';
import { LIFTED_BLACKBOARD_LIMITS } from './lifted-limits.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchArguments } from './args.ts';

const { values } = parseArgs({
  args: benchArguments(),
  options: { load: { type: 'string', default: '200' }, 'no-postgres': { type: 'boolean', default: false } },
});
const LOAD = Number(values.load);
const PROBE = fileURLToPath(new URL('./memory-probe.ts', import.meta.url));
const TOKEN = 'bench-memory-operator-token-0123456789';
const SAMPLE_MS = 20;
const MiB = 1024 * 1024;
const out = (line: string) => process.stdout.write(`${line}\n`);
const mib = (bytes: number) => Math.round(bytes / MiB);

/** The resident set of the server's process tree at one moment: all of it, and per process. */
interface TreeSample {
  at: number;
  /** VmRSS summed over the tree (pages shared by two processes count twice). */
  rss: number;
  /** VmHWM summed over the tree: at least the tree's peak since start. */
  hwm: number;
  /** VmRSS of the server's own process (main thread, PDF worker threads). */
  server: number;
}

/** One running server and its RSS samples. */
class Measured {
  readonly samples: TreeSample[] = [];
  private readonly timer: NodeJS.Timeout;
  readonly child: ChildProcess;
  readonly probeFile: string;
  baseUrl = '';

  constructor(child: ChildProcess, probeFile: string) {
    this.child = child;
    this.probeFile = probeFile;
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  pids(): number[] {
    return processTree(this.child.pid!);
  }

  sample(): TreeSample {
    const statuses = this.pids().map(status);
    const now = {
      at: performance.now(),
      rss: statuses.reduce((sum, entry) => sum + (entry?.rss ?? 0), 0),
      hwm: statuses.reduce((sum, entry) => sum + (entry?.hwm ?? 0), 0),
      server: statuses[0]?.rss ?? 0,
    };
    if (statuses[0]) this.samples.push(now);
    return now;
  }

  /** Highest sampled RSS of the tree since `since`. */
  peakSince(since: number): number {
    return Math.max(0, ...this.samples.filter((entry) => entry.at >= since).map((entry) => entry.rss));
  }

  /**
   * Waits at least `minMs`, then until the tree's RSS moved less than 2 MiB over the last 3 s (at
   * most 60 s in all); answers that sample.
   */
  async settle(minMs = 3000): Promise<TreeSample> {
    const began = performance.now();
    while (performance.now() - began < 60_000) {
      await sleep(250);
      const window = this.samples.filter((entry) => entry.at >= performance.now() - 3000).map((entry) => entry.rss);
      if (performance.now() - began >= Math.max(3000, minMs) && Math.max(...window) - Math.min(...window) < 2 * MiB) break;
    }
    return this.sample();
  }

  /** Asks the probe in the server (bench/memory-probe.ts) for its main thread's figures. */
  async probe(): Promise<ProbeAnswer> {
    await rm(this.probeFile, { force: true });
    this.child.kill('SIGUSR2');
    for (let waited = 0; waited < 10_000; waited += 20) {
      const answer = await readFile(this.probeFile, 'utf8').catch(() => undefined);
      if (answer) return JSON.parse(answer) as ProbeAnswer;
      await sleep(20);
    }
    throw new Error('the memory probe did not answer');
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}

async function start(database: TestDatabase): Promise<Measured> {
  const probeFile = path.join(database.dataDir, 'memory-probe.json');
  const server = await startServerProcess(
    database,
    {
      SVC_OPERATOR_TOKEN: TOKEN,
      SVC_MEMORY_PROBE_FILE: probeFile,
      SVC_PDF_RATE_LIMIT: '0',
      // The load is one client's: the per-IP and per-channel admission windows would refuse it.
      ...LIFTED_BLACKBOARD_LIMITS,
      // The probe is loaded once, by the argument below, whatever the shell's NODE_OPTIONS say.
      NODE_OPTIONS: '',
    },
    { nodeArguments: ['--import', PROBE], deadlineMs: 60 * 60_000 },
  );
  const measured = new Measured(server.child, probeFile);
  measured.baseUrl = server.baseUrl;
  return measured;
}

async function call(url: string, init: RequestInit = {}): Promise<void> {
  const response = await fetch(url, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...(init.headers as Record<string, string>) } });
  await response.arrayBuffer();
  if (response.status < 200 || response.status > 299) throw new Error(`${init.method ?? 'GET'} ${url} answered ${response.status}`);
}

const pdf = numberedPdf(32, 20);
const uploadPdf = (baseUrl: string) =>
  call(`${baseUrl}/v1/pdf/extract/upload?max_pages=32`, { method: 'POST', headers: { 'content-type': 'application/pdf' }, body: new Uint8Array(pdf) });
const texts = Array.from({ length: 256 }, (_, index) => `review ${index}: the agent ranked passages by relevance and the index stored vectors for search`);

/** The mixed load: `LOAD` blackboard puts and gets, searches, embeddings batches, PDFs, four callers at a time. */
async function mixedLoad(baseUrl: string): Promise<void> {
  const board = `${baseUrl}/api/v1/blackboard`;
  const tasks: Array<() => Promise<void>> = [];
  for (let index = 0; index < LOAD; index++) {
    const key = `bench:${index % 16}`;
    tasks.push(() =>
      call(`${board}/put`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key, value: { text: `memory bench note ${index}`, kind: 'note' } }),
      }),
    );
    tasks.push(() => call(`${board}/get?key=${key}&limit=50`));
    if (index % 4 === 0) tasks.push(() => call(`${baseUrl}/api/artifacts?q=${['agent', 'pdf', 'search', 'model'][index % 4]}&limit=20`));
    if (index % 20 === 0)
      tasks.push(() =>
        call(`${baseUrl}/v1/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ input: texts, encoding_format: 'base64' }),
        }),
      );
    if (index % 20 === 10) tasks.push(() => uploadPdf(baseUrl));
  }
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let task = tasks.shift(); task; task = tasks.shift()) await task();
    }),
  );
}

interface Run {
  /** VmHWM summed over the tree once start-up settled: each process's highest resident set since it started. */
  startPeak: number;
  idle: TreeSample;
  /** Physical memory of the tree at idle, each page once (uniqueResidentBytes); else the RSS sum. */
  idleUnique: number;
  probe: ProbeAnswer;
  wasmResident: number;
  /** Once the first PDF is answered and the tree settled again (parser workers started). */
  afterFirstPdf?: TreeSample;
  loadPeak?: number;
  afterLoad?: TreeSample;
}

async function measureRun(database: TestDatabase, withLoad: boolean): Promise<Run> {
  const server = await start(database);
  try {
    const idle = await server.settle(Number(process.env.BENCH_SETTLE_MS ?? 3000));
    const pids = server.pids();
    const run: Run = {
      startPeak: idle.hwm,
      idle,
      idleUnique: uniqueResidentBytes(pids) ?? idle.rss,
      probe: await server.probe(),
      wasmResident: pids.map(wasmResidentBytes).reduce((sum, bytes) => sum + bytes, 0),
    };
    if (!withLoad) return run;
    await uploadPdf(server.baseUrl);
    run.afterFirstPdf = await server.settle();
    const loadStarted = performance.now();
    await mixedLoad(server.baseUrl);
    run.loadPeak = Math.max(server.peakSince(loadStarted), server.sample().rss);
    run.afterLoad = await server.settle();
    return run;
  } finally {
    await server.stop();
  }
}

const embedded = await createTestDatabase({ adminUrl: undefined, prefix: 'svc_bench_memory' });
let fresh: Run;
let existing: Run;
try {
  fresh = await measureRun(embedded, true);
  existing = await measureRun(embedded, false);
} finally {
  await embedded.drop();
}
let postgres: Run | undefined;
if (!values['no-postgres']) {
  const database = await createTestDatabase({
    adminUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    prefix: 'svc_bench_memory',
  });
  try {
    postgres = await measureRun(database, true);
  } finally {
    await database.drop();
  }
}

const load = loadavg()
  .map((value) => value.toFixed(2))
  .join(' ');
const cell = (bytes: number) => String(mib(bytes)).padStart(5);
const row = (label: string, run: Run) =>
  `  ${label.padEnd(22)} start peak ${cell(run.startPeak)}  idle ${cell(run.idleUnique)} (RSS sum ${cell(run.idle.rss)})` +
  (run.afterFirstPdf ? `  after 1st PDF ${cell(run.afterFirstPdf.rss)}  load peak ${cell(run.loadPeak!)}  after load ${cell(run.afterLoad!.rss)}` : '');
const heap = (run: Run) => `V8 heap ${mib(run.probe.usage.heapUsed)} used / ${mib(run.probe.usage.heapTotal)} total`;
const database = (run: Run) => run.idle.rss - run.idle.server;
const detail = (run: Run) =>
  `    at idle: server process ${mib(run.idle.server)} (main thread ${heap(run)})` +
  (database(run) > 0 ? `, database process ${mib(database(run))} (WASM memory ${mib(run.wasmResident)} resident)` : '');
out(
  `memory: svc-server start, resident memory of its process tree in MiB: idle = physical pages resident, each once (RSS sum beside it counts the pages the two processes share twice); start peak = VmHWM summed; RSS sampled every ${SAMPLE_MS} ms; load ${LOAD} puts+gets, ${Math.ceil(LOAD / 4)} searches, ${Math.ceil(LOAD / 20)} embeddings batches of 256, ${Math.ceil(LOAD / 20)} PDFs of 32 pages`,
);
out(row('embedded, fresh dir', fresh));
out(detail(fresh));
out(row('embedded, existing dir', existing));
out(detail(existing));
if (postgres) {
  out(row('PostgreSQL', postgres));
  out(detail(postgres));
}
const pdfWorkers = (run: Run) => mib(run.afterFirstPdf!.server - run.idle.server);
const parts = [
  `server process ${mib(existing.idle.server)} MiB at idle (${heap(existing)})`,
  `embedded database process (PGlite) ${mib(database(existing))} MiB RSS at idle (about 60 of it the node binary's pages, which the server process maps too), of which WASM memory ${mib(existing.wasmResident)} MiB`,
  `PDF workers ${pdfWorkers(fresh)} MiB once started by the first PDF (server process after it minus before)${postgres ? `; ${pdfWorkers(postgres)} MiB with PostgreSQL` : ''}`,
];
out('  what each part costs:');
for (const part of parts) out(`    ${part}`);
const worstPeak = Math.max(fresh.startPeak, existing.startPeak);
const worstIdle = Math.max(fresh.idleUnique, existing.idleUnique);
out(
  `  targets (embedded): idle < 300 MiB: ${mib(worstIdle) < 300 ? 'met' : 'NOT met'} (${mib(worstIdle)}); start peak < 500 MiB: ${mib(worstPeak) < 500 ? 'met' : 'NOT met'} (${mib(worstPeak)})`,
);
out(`  load average ${load} on ${cpus().length} cores`);

const figures: Figure[] = [
  {
    figure: 'idle resident, embedded, fresh dir',
    svc: mib(fresh.idleUnique),
    unit: 'MiB',
    target: { on: 'svc', op: '<', value: 300 },
    note: `RSS summed over the processes ${mib(fresh.idle.rss)} MiB; ${parts.join('; ')}`,
  },
  {
    figure: 'idle resident, embedded, existing dir',
    svc: mib(existing.idleUnique),
    unit: 'MiB',
    target: { on: 'svc', op: '<', value: 300 },
    note: `RSS summed over the processes ${mib(existing.idle.rss)} MiB; ${detail(existing).trim()}`,
  },
  {
    figure: 'peak RSS at start, embedded, fresh dir',
    svc: mib(fresh.startPeak),
    unit: 'MiB',
    target: { on: 'svc', op: '<', value: 500 },
    note: 'VmHWM summed over the server and database processes',
  },
  { figure: 'peak RSS at start, embedded, existing dir', svc: mib(existing.startPeak), unit: 'MiB', target: { on: 'svc', op: '<', value: 500 } },
  {
    figure: 'RSS after mixed load, embedded',
    svc: mib(fresh.afterLoad!.rss),
    unit: 'MiB',
    note: `peak during the load ${mib(fresh.loadPeak!)} MiB; load: ${LOAD} blackboard puts and gets, searches, embeddings, PDFs (parser workers started)`,
  },
];
if (postgres) {
  figures.push(
    {
      figure: 'idle resident, PostgreSQL (comparison)',
      svc: mib(postgres.idleUnique),
      unit: 'MiB',
      note: `peak at start ${mib(postgres.startPeak)} MiB; ${heap(postgres)}`,
    },
    {
      figure: 'RSS after mixed load, PostgreSQL (comparison)',
      svc: mib(postgres.afterLoad!.rss),
      unit: 'MiB',
      note: `peak during the load ${mib(postgres.loadPeak!)} MiB`,
    },
  );
}
reportFigures('memory', figures);
