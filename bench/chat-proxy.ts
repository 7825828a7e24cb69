/**
 * What svc's chat route adds to a streamed completion: 50 concurrent streams against an
 * OpenAI-compatible upstream directly, and through svc (`/v1/chat/completions`, open access,
 * the upstream configured by `SVC_UPSTREAM_BASE_URL`), in alternating rounds of the same run.
 * The upstream streams a fixed answer (`--chunks` chunks `--gap` ms apart). Measured per stream:
 * time to first token (the first content chunk) and to last token (the end of the body).
 * Reported: requests/s per side and the median of the per-pair ratios; the added latency as the
 * median over pairs of (svc - direct) of each percentile, median and p99; and svc's CPU time per
 * stream (its worker thread's), which a busy machine disturbs far less than latency.
 * Target: added median < 1 ms, added p99 < 3 ms (LiteLLM reports 2 to 12 ms).
 *
 * The load generator, the upstream and svc share this machine's cores: through svc a third thread
 * is busy, so where the cores run short, part of the added latency is waiting for a core rather
 * than svc's own work. The bench prints the load generator's CPU per stream and how many cores its
 * threads kept busy on each side, to tell the two apart.
 *
 * Run: pnpm bench:chat-proxy [-- --rounds 10 --seconds 2 --concurrency 50 --chunks 20 --gap 1]
 * `--cpu-prof-dir <dir>` writes each server thread's CPU profile (warm-up and rounds, start-up left
 * out) as `<dir>/chat-proxy-{svc,upstream}.cpuprofile`, to see where svc's time per stream goes.
 * With DATABASE_URL set svc uses that PostgreSQL; otherwise an embedded database in a temporary
 * directory (the chat route does not touch the database with open access).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { reportFigures } from './report.ts';
import { median, percentile } from './stats.ts';
import { startWorkerServer, type WorkerServer } from './worker-server.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '50' },
    chunks: { type: 'string', default: '20' },
    gap: { type: 'string', default: '1' },
    'cpu-prof-dir': { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const durationMs = Number(values.seconds) * 1000;
const concurrency = Number(values.concurrency);
const chunks = Number(values.chunks);
const gapMs = Number(values.gap);
const profileDir = values['cpu-prof-dir'];
const profileFile = (name: string) => (profileDir ? path.resolve(profileDir, `chat-proxy-${name}.cpuprofile`) : undefined);

const body = JSON.stringify({ model: 'bench-chat', messages: [{ role: 'user', content: 'Say something, one token at a time.' }], stream: true, stream_options: { include_usage: true } });
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });

interface StreamTiming {
  firstTokenMs: number;
  lastTokenMs: number;
}

/** One streamed completion; the first token is the first chunk whose content is not empty. */
function streamOnce(url: URL): Promise<StreamTiming> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstTokenMs = -1;
    let text = '';
    const outgoing = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`${url}: status ${response.statusCode}`));
      response.setEncoding('utf8');
      response.on('data', (piece: string) => {
        if (firstTokenMs < 0) {
          text += piece;
          if (text.includes('"content":"token')) firstTokenMs = performance.now() - started;
        }
      });
      response.on('end', () => {
        if (firstTokenMs < 0) reject(new Error(`${url}: no token in the stream`));
        else resolve({ firstTokenMs, lastTokenMs: performance.now() - started });
      });
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** CPU µs each thread of the bench has spent so far: the load generator (this thread), the upstream's and svc's. */
async function threadCpu() {
  const own = process.threadCpuUsage();
  return { client: own.user + own.system, upstream: await upstream.cpuMicros(), svc: await svc.cpuMicros() };
}

/**
 * `concurrency` streams kept open for `ms` against `server`: each finished one is replaced at
 * once. CPU per stream is read for every thread, so a round through svc shows what it costs
 * besides the upstream and the client, and how many of the machine's cores the round kept busy.
 */
async function measure(server: WorkerServer, ms: number) {
  const url = new URL(`${server.url}/chat/completions`);
  const cpuBefore = await threadCpu();
  const timings: StreamTiming[] = [];
  const until = performance.now() + ms;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) timings.push(await streamOnce(url));
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = await threadCpu();
  const perStream = (thread: keyof typeof cpuAfter) => (cpuAfter[thread] - cpuBefore[thread]) / Math.max(1, timings.length);
  const first = timings.map((timing) => timing.firstTokenMs);
  const last = timings.map((timing) => timing.lastTokenMs);
  const cpu = { client: perStream('client'), upstream: perStream('upstream'), svc: perStream('svc') };
  return {
    perSecond: timings.length / elapsed,
    cpu,
    /** Cores the three threads kept busy together (of the machine's `cpus().length`). */
    coresBusy: ((cpu.client + cpu.upstream + cpu.svc) * timings.length) / elapsed / 1e6,
    first: { median: median(first), p99: percentile(first, 99) },
    last: { median: median(last), p99: percentile(last, 99) },
  };
}

if (profileDir) await mkdir(profileDir, { recursive: true });
const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-chat-'));
const serversModule = new URL('./chat-proxy-servers.ts', import.meta.url);
const upstream: WorkerServer = await startWorkerServer(serversModule, { kind: 'upstream', chunks, gapMs, profileFile: profileFile('upstream') });
const svc: WorkerServer = await startWorkerServer(serversModule, { kind: 'svc', upstreamUrl: upstream.url, dataDir, databaseUrl: process.env.DATABASE_URL, profileFile: profileFile('svc') });

// Warm both paths (JIT, connection pools) before measuring.
for (let warm = 0; warm < 2; warm++) {
  await measure(upstream, 1000);
  await measure(svc, 1000);
}

const rateRatios: number[] = [];
const directRates: number[] = [];
const svcRates: number[] = [];
const added = { firstMedian: [] as number[], firstP99: [] as number[], lastMedian: [] as number[], lastP99: [] as number[] };
const rows: string[] = [];
/** CPU µs per stream of svc's thread, and of the upstream's serving the direct streams (for scale). */
const svcCpu: number[] = [];
const upstreamCpu: number[] = [];
/** The load generator's CPU per stream, direct and through svc, and the cores each side kept busy. */
const clientCpu = { direct: [] as number[], svc: [] as number[] };
const coresBusy = { direct: [] as number[], svc: [] as number[] };
const format = (result: Awaited<ReturnType<typeof measure>>) =>
  `${result.perSecond.toFixed(0)} streams/s, first token ${result.first.median.toFixed(2)}/${result.first.p99.toFixed(2)} ms, last ${result.last.median.toFixed(2)}/${result.last.p99.toFixed(2)} ms`;
for (let round = 0; round < rounds; round++) {
  // Alternating order, so a burst of noise on the machine hits both sides of a pair.
  const directFirst = round % 2 === 0;
  const a = await measure(directFirst ? upstream : svc, durationMs);
  const b = await measure(directFirst ? svc : upstream, durationMs);
  const [direct, proxied] = directFirst ? [a, b] : [b, a];
  rateRatios.push(proxied.perSecond / direct.perSecond);
  directRates.push(direct.perSecond);
  svcRates.push(proxied.perSecond);
  svcCpu.push(proxied.cpu.svc);
  upstreamCpu.push(direct.cpu.upstream);
  clientCpu.direct.push(direct.cpu.client);
  clientCpu.svc.push(proxied.cpu.client);
  coresBusy.direct.push(direct.coresBusy);
  coresBusy.svc.push(proxied.coresBusy);
  added.firstMedian.push(proxied.first.median - direct.first.median);
  added.firstP99.push(proxied.first.p99 - direct.first.p99);
  added.lastMedian.push(proxied.last.median - direct.last.median);
  added.lastP99.push(proxied.last.p99 - direct.last.p99);
  rows.push(`  round ${round + 1}: direct ${format(direct)} | svc ${format(proxied)}`);
}
await svc.close();
await upstream.close();
agent.destroy();
await rm(dataDir, { recursive: true, force: true });

const addedMedian = Math.max(median(added.firstMedian), median(added.lastMedian));
const addedP99 = Math.max(median(added.firstP99), median(added.lastP99));
process.stdout.write(
  [
    `chat-proxy: ${rounds} paired rounds x ${durationMs / 1000} s, ${concurrency} concurrent streams, ${chunks} chunks ${gapMs} ms apart (median/p99)`,
    ...rows,
    `  throughput ratio svc/direct (median of pairs): ${median(rateRatios).toFixed(3)}`,
    `  CPU per stream (median of rounds): svc ${median(svcCpu).toFixed(0)} µs, the upstream itself ${median(upstreamCpu).toFixed(0)} µs; the load generator ${median(clientCpu.direct).toFixed(0)} µs direct, ${median(clientCpu.svc).toFixed(0)} µs through svc`,
    `  cores kept busy by the bench's threads (of ${cpus().length}): ${median(coresBusy.direct).toFixed(2)} direct, ${median(coresBusy.svc).toFixed(2)} through svc`,
    `  added time to first token (median of pairs): median ${median(added.firstMedian).toFixed(2)} ms, p99 ${median(added.firstP99).toFixed(2)} ms`,
    `  added time to last token (median of pairs): median ${median(added.lastMedian).toFixed(2)} ms, p99 ${median(added.lastP99).toFixed(2)} ms`,
    `  load average at the end: ${loadavg().map((value) => value.toFixed(2)).join(', ')}`,
    `  target added median < 1 ms: ${addedMedian < 1 ? 'met' : 'NOT met'}; added p99 < 3 ms: ${addedP99 < 3 ? 'met' : 'NOT met'}`,
    '',
  ].join('\n'),
);

const cpuNote = `CPU per stream: svc ${median(svcCpu).toFixed(0)} µs, the upstream itself ${median(upstreamCpu).toFixed(0)} µs; bench threads kept ${median(coresBusy.svc).toFixed(2)} of ${cpus().length} cores busy through svc`;
const setting = `${concurrency} streams, ${chunks} chunks ${gapMs} ms apart, ${rounds} pairs`;
const addedFigure = (figure: string, values: number[], ceiling: number) => ({
  figure,
  svc: Number(median(values).toFixed(2)),
  unit: 'ms',
  target: { on: 'svc' as const, op: '<' as const, value: ceiling },
  note: `svc minus direct, median of ${rounds} pairs (${setting}); ${cpuNote}`,
});
reportFigures('chat-proxy', [
  addedFigure('added time to first token, median', added.firstMedian, 1),
  addedFigure('added time to first token, p99', added.firstP99, 3),
  addedFigure('added time to last token, median', added.lastMedian, 1),
  addedFigure('added time to last token, p99', added.lastP99, 3),
  {
    figure: 'streamed completions per second',
    svc: Math.round(median(svcRates)),
    baseline: Math.round(median(directRates)),
    unit: 'streams/s',
    ratio: Number(median(rateRatios).toFixed(3)),
    note: `through svc against the upstream directly, median of pair ratios (${setting}); ${cpuNote}`,
  },
]);
