/**
 * Memory of `svc-server start` as a process: its resident set (VmRSS in /proc/<pid>/status,
 * sampled every 20 ms, and VmHWM for the peak between samples) at the peak of start-up, at
 * idle once start-up has settled, on the first PDF request (the parser workers start then),
 * and during and after a mixed load (blackboard puts and gets, catalog searches, embeddings,
 * PDF extractions). The embedded database runs on a fresh data directory, then again on the
 * same (existing) one; PostgreSQL (a scratch database on BENCH_DATABASE_URL) is the comparison
 * row. What each part costs is printed: the server without PGlite (PostgreSQL mode), PGlite
 * (embedded minus PostgreSQL; its WebAssembly memory as the probe and smaps see it), the PDF
 * workers (RSS after the first PDF minus before), and the main thread's V8 heap (the probe,
 * bench/memory-probe.ts, answers process.memoryUsage() over IPC). Targets: idle under 300 MiB,
 * start-up peak under 500 MiB, both on the embedded database.
 *
 * Run: pnpm bench:memory [-- --load 200]
 *   BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) for the PostgreSQL
 *   row; `--no-postgres` skips it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createTestDatabase, type TestDatabase } from '../packages/server/test/helpers/test-database.ts';
import { numberedPdf } from '../packages/server/test/helpers/pdf-fixtures.ts';
import type { ProbeAnswer } from './memory-probe.ts';
import { reportFigures, type Figure } from './report.ts';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((argument) => argument !== '--'),
  options: { load: { type: 'string', default: '200' }, 'no-postgres': { type: 'boolean', default: false } },
});
const LOAD = Number(values.load);
const BIN = fileURLToPath(new URL('../packages/server/src/bin.ts', import.meta.url));
const PROBE = fileURLToPath(new URL('./memory-probe.ts', import.meta.url));
const TOKEN = 'bench-memory-operator-token-0123456789';
const SAMPLE_MS = 20;
const MiB = 1024 * 1024;
const out = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes: number) => Math.round(bytes / MiB);

/** VmRSS and VmHWM of a process, in bytes (undefined once it is gone). */
function status(pid: number): { rss: number; hwm: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0) * 1024;
    return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
  } catch {
    return undefined;
  }
}

/**
 * Resident bytes of the process's WebAssembly memories (all threads): V8 reserves each one as
 * an accessible anonymous mapping followed by a guard region of gigabytes, which nothing else in
 * a Node process has.
 */
function wasmResidentBytes(pid: number): number {
  const mappings = readFileSync(`/proc/${pid}/smaps`, 'utf8').split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/);
  let total = 0;
  for (let index = 0; index + 1 < mappings.length; index++) {
    const [range, permissions, , , inode] = mappings[index]!.split(/\s+/);
    const [nextRange, nextPermissions] = mappings[index + 1]!.split(/\s+/);
    const end = parseInt(range!.split('-')[1]!, 16);
    const [nextStart, nextEnd] = nextRange!.split('-').map((hex) => parseInt(hex, 16));
    if (permissions !== 'rw-p' || inode !== '0' || nextPermissions !== '---p' || nextStart !== end || nextEnd! - nextStart! < 4 * 1024 * MiB) continue;
    total += Number(/\nRss:\s+(\d+)/.exec(mappings[index]!)?.[1] ?? 0) * 1024;
  }
  return total;
}

/** One running server and its RSS samples. */
class Measured {
  readonly samples: Array<{ at: number; rss: number }> = [];
  private readonly timer: NodeJS.Timeout;
  readonly child: ChildProcess;
  baseUrl = '';

  constructor(child: ChildProcess) {
    this.child = child;
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  sample(): { rss: number; hwm: number } | undefined {
    const now = status(this.child.pid!);
    if (now) this.samples.push({ at: performance.now(), rss: now.rss });
    return now;
  }

  /** Highest sampled RSS since `since`. */
  peakSince(since: number): number {
    return Math.max(0, ...this.samples.filter((entry) => entry.at >= since).map((entry) => entry.rss));
  }

  /** Waits until RSS moved less than 2 MiB over the last 3 s (at most 30 s); answers that RSS. */
  async settle(): Promise<number> {
    const began = performance.now();
    while (performance.now() - began < 30_000) {
      await sleep(250);
      const window = this.samples.filter((entry) => entry.at >= performance.now() - 3000).map((entry) => entry.rss);
      if (performance.now() - began >= 3000 && Math.max(...window) - Math.min(...window) < 2 * MiB) break;
    }
    return this.sample()!.rss;
  }

  probe(): Promise<ProbeAnswer> {
    return new Promise((resolve) => {
      this.child.once('message', (answer) => resolve(answer as ProbeAnswer));
      this.child.send('memory');
    });
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
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_') && name !== 'DATABASE_URL' && name !== 'NODE_OPTIONS'));
  const lifted = String(Number.MAX_SAFE_INTEGER);
  const child = spawn(process.execPath, ['--import', PROBE, BIN, 'start'], {
    env: {
      ...inherited,
      SVC_HOST: '127.0.0.1',
      SVC_PORT: '0',
      SVC_LOG_LEVEL: 'info',
      SVC_DATA_DIR: database.dataDir,
      SVC_OPERATOR_TOKEN: TOKEN,
      SVC_PDF_RATE_LIMIT: '0',
      // The load is one client's: the per-IP and per-channel admission windows would refuse it.
      SVC_BLACKBOARD_IP_PUTS_PER_HOUR: lifted,
      SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR: lifted,
      SVC_BLACKBOARD_GLOBAL_BYTES_PER_HOUR: lifted,
      SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR: lifted,
      SVC_BLACKBOARD_PRINCIPAL_BYTES_PER_HOUR: lifted,
      SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: lifted,
      SVC_BLACKBOARD_CHANNEL_BYTES_PER_HOUR: lifted,
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const measured = new Measured(child);
  measured.baseUrl = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const line = buffered.split('\n').find((candidate) => candidate.includes('"svc listening"'));
      if (line) resolve(JSON.parse(line).baseUrl);
      if (buffered.length > 1_000_000) buffered = buffered.slice(-100_000);
    });
    child.once('exit', (code) => reject(new Error(`svc-server exited with ${code} before listening`)));
  });
  // Keep draining its log so the pipe never blocks it.
  return measured;
}

async function call(url: string, init: RequestInit = {}): Promise<void> {
  const response = await fetch(url, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...(init.headers as Record<string, string>) } });
  await response.arrayBuffer();
  if (response.status < 200 || response.status > 299) throw new Error(`${init.method ?? 'GET'} ${url} answered ${response.status}`);
}

const pdf = numberedPdf(32, 20);
const uploadPdf = (baseUrl: string) => call(`${baseUrl}/v1/pdf/extract/upload?max_pages=32`, { method: 'POST', headers: { 'content-type': 'application/pdf' }, body: new Uint8Array(pdf) });
const texts = Array.from({ length: 256 }, (_, index) => `review ${index}: the agent ranked passages by relevance and the index stored vectors for search`);

/** The mixed load: `LOAD` blackboard puts and gets, searches, embeddings batches, PDFs, four callers at a time. */
async function mixedLoad(baseUrl: string): Promise<void> {
  const board = `${baseUrl}/api/v1/blackboard`;
  const tasks: Array<() => Promise<void>> = [];
  for (let index = 0; index < LOAD; index++) {
    const key = `bench:${index % 16}`;
    tasks.push(() => call(`${board}/put`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key, value: { text: `memory bench note ${index}`, kind: 'note' } }) }));
    tasks.push(() => call(`${board}/get?key=${key}&limit=50`));
    if (index % 4 === 0) tasks.push(() => call(`${baseUrl}/api/artifacts?q=${['agent', 'pdf', 'search', 'model'][index % 4]}&limit=20`));
    if (index % 20 === 0) tasks.push(() => call(`${baseUrl}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: texts, encoding_format: 'base64' }) }));
    if (index % 20 === 10) tasks.push(() => uploadPdf(baseUrl));
  }
  await Promise.all(Array.from({ length: 4 }, async () => {
    for (let task = tasks.shift(); task; task = tasks.shift()) await task();
  }));
}

interface Run {
  /** VmHWM once start-up settled: the highest resident set since exec. */
  startPeak: number;
  idle: number;
  probe: ProbeAnswer;
  wasmResident: number;
  /** Resident set once the first PDF is answered and it settled again (workers started). */
  afterFirstPdf?: number;
  loadPeak?: number;
  afterLoad?: number;
}

async function measureRun(database: TestDatabase, withLoad: boolean): Promise<Run> {
  const server = await start(database);
  try {
    const idle = await server.settle();
    const startPeak = server.sample()!.hwm;
    const probe = await server.probe();
    const wasmResident = wasmResidentBytes(server.child.pid!);
    if (!withLoad) return { startPeak, idle, probe, wasmResident };
    await uploadPdf(server.baseUrl);
    const afterFirstPdf = await server.settle();
    const loadStarted = performance.now();
    await mixedLoad(server.baseUrl);
    const loadPeak = Math.max(server.peakSince(loadStarted), server.sample()!.rss);
    const afterLoad = await server.settle();
    return { startPeak, idle, probe, wasmResident, afterFirstPdf, loadPeak, afterLoad };
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
  const database = await createTestDatabase({ adminUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', prefix: 'svc_bench_memory' });
  try {
    postgres = await measureRun(database, true);
  } finally {
    await database.drop();
    await rm(database.dataDir, { recursive: true, force: true });
  }
}

const load = loadavg().map((value) => value.toFixed(2)).join(' ');
const row = (label: string, run: Run) =>
  `  ${label.padEnd(22)} start peak ${String(mib(run.startPeak)).padStart(5)}  idle ${String(mib(run.idle)).padStart(5)}` +
  (run.afterFirstPdf !== undefined ? `  after 1st PDF ${String(mib(run.afterFirstPdf)).padStart(5)}  load peak ${String(mib(run.loadPeak!)).padStart(5)}  after load ${String(mib(run.afterLoad!)).padStart(5)}` : '');
const heap = (run: Run) => `V8 heap ${mib(run.probe.usage.heapUsed)} used / ${mib(run.probe.usage.heapTotal)} total, external ${mib(run.probe.usage.external)}`;
const wasm = (run: Run) => `WASM memory ${run.probe.wasmMemoryBytes.map(mib).join('+') || '0'} MiB reserved, ${mib(run.wasmResident)} resident`;
out(`memory: svc-server start, resident set in MiB (VmRSS sampled every ${SAMPLE_MS} ms, peak = VmHWM); load ${LOAD} puts+gets, ${Math.ceil(LOAD / 4)} searches, ${Math.ceil(LOAD / 20)} embeddings batches of 256, ${Math.ceil(LOAD / 20)} PDFs of 32 pages`);
out(row('embedded, fresh dir', fresh));
out(row('embedded, existing dir', existing));
if (postgres) out(row('PostgreSQL', postgres));
const parts: string[] = [];
if (postgres) {
  parts.push(`server without PGlite (PostgreSQL mode, idle) ${mib(postgres.idle)} MiB`);
  parts.push(`PGlite ${mib(existing.idle - postgres.idle)} MiB (embedded idle minus PostgreSQL idle; ${wasm(existing)})`);
} else {
  parts.push(`PGlite: ${wasm(existing)}`);
}
parts.push(`PDF workers ${mib(fresh.afterFirstPdf! - fresh.idle)} MiB (after the first PDF minus idle, embedded)${postgres ? `, ${mib(postgres.afterFirstPdf! - postgres.idle)} MiB (PostgreSQL)` : ''}`);
parts.push(`main thread at idle: ${heap(existing)}`);
out('  what each part costs:');
for (const part of parts) out(`    ${part}`);
const worstPeak = Math.max(fresh.startPeak, existing.startPeak);
const worstIdle = Math.max(fresh.idle, existing.idle);
out(`  targets: idle < 300 MiB: ${mib(worstIdle) < 300 ? 'met' : 'NOT met'} (${mib(worstIdle)}); start peak < 500 MiB: ${mib(worstPeak) < 500 ? 'met' : 'NOT met'} (${mib(worstPeak)})`);
out(`  load average ${load} on ${cpus().length} cores`);

const figures: Figure[] = [
  { figure: 'idle RSS, embedded, fresh dir', svc: mib(fresh.idle), unit: 'MiB', target: { on: 'svc', op: '<', value: 300 }, note: parts.join('; ') },
  { figure: 'idle RSS, embedded, existing dir', svc: mib(existing.idle), unit: 'MiB', target: { on: 'svc', op: '<', value: 300 }, note: `${heap(existing)}; ${wasm(existing)}` },
  { figure: 'peak RSS at start, embedded, fresh dir', svc: mib(fresh.startPeak), unit: 'MiB', target: { on: 'svc', op: '<', value: 500 } },
  { figure: 'peak RSS at start, embedded, existing dir', svc: mib(existing.startPeak), unit: 'MiB', target: { on: 'svc', op: '<', value: 500 } },
  {
    figure: 'RSS after mixed load, embedded',
    svc: mib(fresh.afterLoad!),
    unit: 'MiB',
    note: `peak during the load ${mib(fresh.loadPeak!)} MiB; load: ${LOAD} blackboard puts and gets, searches, embeddings, PDFs (parser workers started)`,
  },
];
if (postgres) {
  figures.push(
    { figure: 'idle RSS, PostgreSQL (comparison)', svc: mib(postgres.idle), unit: 'MiB', note: `peak at start ${mib(postgres.startPeak)} MiB; ${heap(postgres)}` },
    { figure: 'RSS after mixed load, PostgreSQL (comparison)', svc: mib(postgres.afterLoad!), unit: 'MiB', note: `peak during the load ${mib(postgres.loadPeak!)} MiB` },
  );
}
reportFigures('memory', figures);
