/**
 * What svc's chat route adds to a streamed completion: 50 concurrent streams against an
 * OpenAI-compatible upstream directly, and through svc (`/v1/chat/completions`, open access,
 * the upstream configured by `SVC_UPSTREAM_BASE_URL`), in alternating rounds of the same run.
 * The upstream streams a fixed answer (`--chunks` chunks). Measured per stream: time to first
 * token (the first content chunk) and to last token (the end of the body). Two phases:
 *
 * - **Latency** (the target): the upstream sends a chunk every `--gap` ms (20: 50 tokens/s, the
 *   pace of a served model), and the 50 streams start spread over one stream's length, as 50
 *   independent clients would, then each starts its next stream when one ends. Reported: the
 *   added latency as the median over pairs of (svc - direct) of each percentile, median and p99.
 *   Target: added median < 1 ms, added p99 < 3 ms (LiteLLM reports 2 to 12 ms).
 * - **Saturation** (no target): chunks `--saturate-gap` ms apart (1) and all 50 streams started
 *   at once, so the machine runs out of cores: streams/s through svc against direct (median of
 *   pair ratios) and CPU per stream. The added latency printed here is mostly queueing for a
 *   core (three busy threads on two cores), which is why the target is read in the latency phase.
 *
 * - **Responses** (targets, with `store: false`): the paced streams through svc's
 *   `/v1/responses` (translated to chat, the same upstream) against its `/v1/chat/completions`,
 *   and with `store: true`, in rotating rounds of `--responses-rounds`. Reported: what translation
 *   adds to the median time to first token (target < 0.2 ms), svc's CPU per stream against
 *   chat's (target at most 1.2x), and the same for `store: true` (no target: a database write).
 * - **Tracing** (no target; the phases above are run with tracing off, as svc runs by default):
 *   the paced streams through svc against a second svc with OTEL_EXPORTER_OTLP_ENDPOINT set,
 *   exporting its spans (OTLP/HTTP protobuf, the SDK's default) to a collector stand-in on
 *   loopback, in alternating rounds of `--tracing-rounds`. Reported: what tracing adds to the
 *   median and p99 times to first and last token, svc's CPU per stream with tracing on against
 *   off, and the spans' bytes the collector received.
 *
 * - **Deployments** (the latency phase's targets): the paced streams through a svc whose model has
 *   three deployments (weights 1:1:2, each its own connection pool to the same upstream), against
 *   the upstream directly and the one-deployment svc, in rotating rounds of `--deployments-rounds`.
 *   Reported: its added time to first and last token over direct (targets as in the latency
 *   phase), over the one-deployment svc, and its CPU per stream.
 *
 * svc's CPU time per stream (its worker thread's) is reported in both: a busy machine disturbs it
 * far less than latency. The bench also prints the load generator's CPU per stream and how many
 * cores its threads kept busy on each side, and each server thread's pauses in every round (young and
 * old garbage collections with the longest of each, the MiB its young collections promoted, and its
 * event loop's delay p99): svc's young collections, and what they promote, are its tail.
 *
 * Run: pnpm bench:chat-proxy [-- --rounds 10 --seconds 3 --concurrency 50 --chunks 20 --gap 20
 *   --saturate-rounds 4 --saturate-gap 1 --keyed-rounds 4 --portkey-rounds 5]
 * `--in-thread` also times each content chunk inside svc's thread and the bare proxy's, from the
 * upstream's piece handed over to the write that sends it on (median / p99 µs): what the proxy's
 * own code takes, apart from the machine's wait to wake its thread. Off by default, so the
 * target's figures carry no stamping.
 * `--cpu-prof-dir <dir>` writes each server thread's CPU profile (warm-up and rounds, start-up left
 * out) as `<dir>/chat-proxy-{svc,upstream,deployed}.cpuprofile` (`deployed`: the three-deployment
 * svc), to see where svc's time per stream goes.
 * - **Keyed** (issue 42's targets; bench/keyed-path.ts): saturated streams (the `--chunks` chunks
 *   back to back, 16 connections) through a svc of its own, called in `--keyed-rounds` rotating
 *   rounds with the operator token, a developer key and an agent's access token: the keyed
 *   CPU per stream and streams/s over the operator's, and on PostgreSQL (BENCH_DATABASE_URL) the
 *   database transactions per call.
 *
 * - **Portkey** (issue 42's table; bench/portkey-baseline.ts): the bare hop, Portkey's open-source
 *   gateway (`@portkey-ai/gateway`, a child process) and a svc of its own with the operator token
 *   and a developer key, over one upstream, gateways pinned to core 0 and the load to core 1, in
 *   `--portkey-rounds` rotating rounds: added time to first token at 16 streams (`--gap` paced),
 *   and saturated non-streamed JSON chat at 64 connections (requests/s, CPU per request); svc's
 *   developer key over Portkey printed as ratios. If Portkey fails to start, the bench says why and
 *   measures the others.
 *
 * `--phase <names>` runs only the phases named (comma-separated: deployments, latency, saturation,
 * responses, tracing, keyed, portkey; all by default, in that order), and prints and reports only their figures. The servers
 * start and warm up alike either way; note that a phase run alone follows only that warm-up,
 * while in a full run the later phases follow the earlier phases' rounds through the same svc.
 * With DATABASE_URL set svc uses that PostgreSQL; otherwise an embedded database in a temporary
 * directory (the chat route does not touch the database with open access).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type Figure, reportFigures } from './report.ts';
import { median, percentile } from './stats.ts';
import { startWorkerServer, type WorkerServer } from './worker-server.ts';
import { startFakeOtlpCollector } from '@svc/testing/fake-otlp-collector';
import type { PauseStats } from './chat-proxy-servers.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchArguments } from './args.ts';
import { runKeyedPath } from './keyed-path.ts';
import { runPortkeyBaseline } from './portkey-baseline.ts';

/** The bench's phases, in the order they run; `--phase` picks some (comma-separated). */
const PHASES = ['deployments', 'latency', 'saturation', 'responses', 'tracing', 'keyed', 'portkey'] as const;
type PhaseName = (typeof PHASES)[number];

const { values } = parseArgs({
  args: benchArguments(),
  options: {
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '50' },
    chunks: { type: 'string', default: '20' },
    gap: { type: 'string', default: '20' },
    'saturate-rounds': { type: 'string', default: '4' },
    'saturate-gap': { type: 'string', default: '1' },
    'responses-rounds': { type: 'string', default: '6' },
    'tracing-rounds': { type: 'string', default: '4' },
    'deployments-rounds': { type: 'string', default: '4' },
    'keyed-rounds': { type: 'string', default: '4' },
    'portkey-rounds': { type: 'string', default: '5' },
    'cpu-prof-dir': { type: 'string' },
    'in-thread': { type: 'boolean', default: false },
    phase: { type: 'string', default: PHASES.join(',') },
  },
});
const rounds = Number(values.rounds);
const durationMs = Number(values.seconds) * 1000;
const concurrency = Number(values.concurrency);
const chunks = Number(values.chunks);
const gapMs = Number(values.gap);
const saturateRounds = Number(values['saturate-rounds']);
const saturateGapMs = Number(values['saturate-gap']);
const responsesRounds = Number(values['responses-rounds']);
const tracingRounds = Number(values['tracing-rounds']);
const deploymentsRounds = Number(values['deployments-rounds']);
const phases = new Set(values.phase.split(',').map((name) => name.trim()));
for (const name of phases)
  if (!(PHASES as readonly string[]).includes(name)) throw new Error(`--phase: unknown phase "${name}" (one or more of ${PHASES.join(', ')}, comma-separated)`);
const runs = (name: PhaseName) => phases.has(name);
/** The upstream paces a stream by the model it is asked for: one model per phase. */
const PACED = 'bench-chat';
const SATURATE = 'bench-chat-saturate';
const gaps = { [PACED]: gapMs, [SATURATE]: saturateGapMs };
const profileDir = values['cpu-prof-dir'];
const traceChunks = values['in-thread'];
const profileFile = (name: string) => (profileDir ? path.resolve(profileDir, `chat-proxy-${name}.cpuprofile`) : undefined);

const bodyFor = (model: string) =>
  JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Say something, one token at a time.' }],
    stream: true,
    stream_options: { include_usage: true },
  });

/** Where a round's streams go on a server, and how the first token shows in its stream. */
interface Route {
  path: string;
  body: (model: string) => string;
  /** Text that appears in the stream with the first token. */
  marker: string;
}
const chatRoute: Route = { path: '/chat/completions', body: bodyFor, marker: '"content":"token' };
/** The same question through the Responses API: translated to chat by svc, the answer as `response.output_text.delta` events. */
const responsesRoute = (store: boolean): Route => ({
  path: '/responses',
  body: (model) => JSON.stringify({ model, input: 'Say something, one token at a time.', stream: true, store }),
  marker: '"delta":"token',
});
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });

interface StreamTiming {
  firstTokenMs: number;
  lastTokenMs: number;
}

/** One streamed completion; the first token is the first chunk whose content is not empty. */
function streamOnce(url: URL, body: string, marker = chatRoute.marker): Promise<StreamTiming> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstTokenMs = -1;
    let text = '';
    const outgoing = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        if (response.statusCode !== 200) reject(new Error(`${url}: status ${response.statusCode}`));
        response.setEncoding('utf8');
        response.on('data', (piece: string) => {
          if (firstTokenMs < 0) {
            text += piece;
            if (text.includes(marker)) firstTokenMs = performance.now() - started;
          }
        });
        response.on('end', () => {
          if (firstTokenMs < 0) reject(new Error(`${url}: no token in the stream`));
          else resolve({ firstTokenMs, lastTokenMs: performance.now() - started });
        });
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** CPU µs each thread of the bench has spent so far: the load generator (this thread), the upstream's, svc's and the bare proxy's. */
async function threadCpu() {
  const own = process.threadCpuUsage();
  const svcCpu = await svc.ask<NodeJS.CpuUsage>('cpu', 'cpu');
  const deployedCpu = await deployedSvc.ask<NodeJS.CpuUsage>('cpu', 'cpu');
  return {
    client: own.user + own.system,
    upstream: await upstream.cpuMicros(),
    svc: svcCpu.user + svcCpu.system,
    hop: await bareProxy.cpuMicros(),
    traced: await tracedSvc.cpuMicros(),
    deployed: deployedCpu.user + deployedCpu.system,
    /** The kernel's share of svc's and the three-deployment svc's (system time: sockets, connects). */
    svcSystem: svcCpu.system,
    deployedSystem: deployedCpu.system,
  };
}

/** How a round is run: which model (and so which pace), and whether the streams start spread or at once. */
interface Phase {
  model: string;
  gapMs: number;
  /** Spread the first streams over one stream's length (independent clients), or start all at once. */
  spread: boolean;
}

/**
 * One round: each side measured once, starting with a different side each round, so no side is
 * always the one measured first (or right after the same neighbour) on a machine that drifts.
 */
async function measureInTurn(sides: readonly WorkerServer[], round: number, phase: Phase): Promise<Map<WorkerServer, Measured>> {
  const measured = new Map<WorkerServer, Measured>();
  for (let turn = 0; turn < sides.length; turn++) {
    const side = sides[(round + turn) % sides.length]!;
    measured.set(side, await measure(side, durationMs, phase));
  }
  return measured;
}

/**
 * `concurrency` streams kept open for `ms` against `server`: each finished one is replaced at
 * once. CPU per stream is read for every thread, so a round through svc shows what it costs
 * besides the upstream and the client, and how many of the machine's cores the round kept busy.
 */
async function measure(server: WorkerServer, ms: number, phase: Phase, route: Route = chatRoute) {
  const url = new URL(`${server.url}${route.path}`);
  const body = route.body(phase.model);
  await server.ask<PauseStats>('pauses', 'pauses');
  const cpuBefore = await threadCpu();
  const timings: StreamTiming[] = [];
  const until = performance.now() + ms;
  const started = performance.now();
  const streamMs = chunks * phase.gapMs;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      if (phase.spread) await sleep((worker * streamMs) / concurrency);
      while (performance.now() < until) timings.push(await streamOnce(url, body, route.marker));
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = await threadCpu();
  const pauses = await server.ask<PauseStats>('pauses', 'pauses');
  const perStream = (thread: keyof typeof cpuAfter) => (cpuAfter[thread] - cpuBefore[thread]) / Math.max(1, timings.length);
  const first = timings.map((timing) => timing.firstTokenMs);
  const last = timings.map((timing) => timing.lastTokenMs);
  const cpu = {
    client: perStream('client'),
    upstream: perStream('upstream'),
    svc: perStream('svc'),
    hop: perStream('hop'),
    traced: perStream('traced'),
    deployed: perStream('deployed'),
    svcSystem: perStream('svcSystem'),
    deployedSystem: perStream('deployedSystem'),
  };
  return {
    streams: timings.length,
    perSecond: timings.length / elapsed,
    cpu,
    /** Cores the three threads kept busy together (of the machine's `cpus().length`). */
    coresBusy: ((cpu.client + cpu.upstream + cpu.svc + cpu.hop + cpu.traced + cpu.deployed) * timings.length) / elapsed / 1e6,
    first: { median: median(first), p99: percentile(first, 99) },
    last: { median: median(last), p99: percentile(last, 99) },
    pauses,
  };
}

type Measured = Awaited<ReturnType<typeof measure>>;
const format = (result: Measured) =>
  `${result.perSecond.toFixed(0)} streams/s, first token ${result.first.median.toFixed(2)}/${result.first.p99.toFixed(2)} ms, last ${result.last.median.toFixed(2)}/${result.last.p99.toFixed(2)} ms`;
/** The server thread's own pauses in a round: young and old collections, and its event loop's delay. */
const formatPauses = ({ pauses }: Measured) =>
  `gc ${pauses.minorGcs} young (max ${pauses.minorGcMaxMs.toFixed(1)} ms, ${(pauses.promotedBytes / 1048576).toFixed(1)} MiB promoted), ${pauses.majorGcs} old (max ${pauses.majorGcMaxMs.toFixed(1)} ms); loop delay p99 ${pauses.loopDelayP99Ms.toFixed(1)} ms, max ${pauses.loopDelayMaxMs.toFixed(1)} ms${pauses.chunks ? `; in-thread per chunk ${pauses.chunks.medianUs.toFixed(0)}/${pauses.chunks.p99Us.toFixed(0)} µs` : ''}${pauses.connects !== undefined ? `; ${pauses.connects} upstream connects` : ''}`;

/** The added latency of one side over the direct calls, a value per round. */
const addedSeries = () => ({ firstMedian: [] as number[], firstP99: [] as number[], lastMedian: [] as number[], lastP99: [] as number[] });
function pushAdded(series: ReturnType<typeof addedSeries>, side: Measured, direct: Measured) {
  series.firstMedian.push(side.first.median - direct.first.median);
  series.firstP99.push(side.first.p99 - direct.first.p99);
  series.lastMedian.push(side.last.median - direct.last.median);
  series.lastP99.push(side.last.p99 - direct.last.p99);
}

/**
 * Rounds of one phase, direct and through svc (and through the bare proxy when given), in an
 * order that rotates each round, so a burst of noise on the machine hits every side alike.
 */
async function runPhase(phase: Phase, pairs: number, hop?: WorkerServer) {
  const result = {
    rateRatios: [] as number[],
    directRates: [] as number[],
    svcRates: [] as number[],
    added: addedSeries(),
    /** What the bare proxy adds over direct calls: the cost of one more hop on this machine. */
    hopAdded: addedSeries(),
    rows: [] as string[],
    /** CPU µs per stream of svc's thread, and of the upstream's serving the direct streams (for scale). */
    svcCpu: [] as number[],
    upstreamCpu: [] as number[],
    hopCpu: [] as number[],
    /** The load generator's CPU per stream, direct and through svc, and the cores each side kept busy. */
    clientCpu: { direct: [] as number[], svc: [] as number[] },
    coresBusy: { direct: [] as number[], svc: [] as number[] },
    /** svc's pauses in each of its rounds, and the upstream's in the direct rounds (for scale). */
    pauses: { direct: [] as PauseStats[], svc: [] as PauseStats[], hop: [] as PauseStats[] },
    /** KiB promoted to the old generation per stream: svc's thread, and the upstream's in the direct rounds. */
    promotedKiB: { direct: [] as number[], svc: [] as number[] },
  };
  const sides: WorkerServer[] = hop ? [upstream, svc, hop] : [upstream, svc];
  for (let round = 0; round < pairs; round++) {
    const measured = await measureInTurn(sides, round, phase);
    const direct = measured.get(upstream)!;
    const proxied = measured.get(svc)!;
    result.rateRatios.push(proxied.perSecond / direct.perSecond);
    result.directRates.push(direct.perSecond);
    result.svcRates.push(proxied.perSecond);
    result.svcCpu.push(proxied.cpu.svc);
    result.upstreamCpu.push(direct.cpu.upstream);
    result.clientCpu.direct.push(direct.cpu.client);
    result.clientCpu.svc.push(proxied.cpu.client);
    result.coresBusy.direct.push(direct.coresBusy);
    result.coresBusy.svc.push(proxied.coresBusy);
    result.pauses.direct.push(direct.pauses);
    result.pauses.svc.push(proxied.pauses);
    result.promotedKiB.direct.push(direct.pauses.promotedBytes / 1024 / Math.max(1, direct.streams));
    result.promotedKiB.svc.push(proxied.pauses.promotedBytes / 1024 / Math.max(1, proxied.streams));
    pushAdded(result.added, proxied, direct);
    result.rows.push(`  round ${round + 1}: direct ${format(direct)} | svc ${format(proxied)}`);
    result.rows.push(`    pauses: upstream ${formatPauses(direct)} | svc ${formatPauses(proxied)}`);
    const bare = hop && measured.get(hop);
    if (bare) {
      pushAdded(result.hopAdded, bare, direct);
      result.hopCpu.push(bare.cpu.hop);
      result.pauses.hop.push(bare.pauses);
      result.rows.push(`    bare proxy: ${format(bare)}; ${formatPauses(bare)}`);
    }
  }
  return result;
}

type PhaseResult = Awaited<ReturnType<typeof runPhase>>;

/**
 * Rounds of the same paced streams through svc's chat route and its Responses route (store false,
 * then true), in an order that rotates each round. Per round: the Responses side's median time to
 * first token minus chat's, and its CPU per stream over chat's.
 */
async function runResponsesPhase(phase: Phase, pairs: number) {
  const sides: Array<{ name: 'chat' | 'responses' | 'stored'; route: Route }> = [
    { name: 'chat', route: chatRoute },
    { name: 'responses', route: responsesRoute(false) },
    { name: 'stored', route: responsesRoute(true) },
  ];
  const result = {
    addedFirst: { responses: [] as number[], stored: [] as number[] },
    cpuRatio: { responses: [] as number[], stored: [] as number[] },
    cpu: { chat: [] as number[], responses: [] as number[], stored: [] as number[] },
    rows: [] as string[],
  };
  for (let round = 0; round < pairs; round++) {
    const measured = new Map<string, Measured>();
    for (let turn = 0; turn < sides.length; turn++) {
      const side = sides[(round + turn) % sides.length]!;
      measured.set(side.name, await measure(svc, durationMs, phase, side.route));
    }
    const chat = measured.get('chat')!;
    result.cpu.chat.push(chat.cpu.svc);
    for (const name of ['responses', 'stored'] as const) {
      const side = measured.get(name)!;
      result.addedFirst[name].push(side.first.median - chat.first.median);
      result.cpuRatio[name].push(side.cpu.svc / chat.cpu.svc);
      result.cpu[name].push(side.cpu.svc);
    }
    result.rows.push(
      `  round ${round + 1}: chat ${format(chat)} (svc ${chat.cpu.svc.toFixed(0)} µs) | responses ${format(measured.get('responses')!)} (svc ${measured.get('responses')!.cpu.svc.toFixed(0)} µs) | store: true ${format(measured.get('stored')!)} (svc ${measured.get('stored')!.cpu.svc.toFixed(0)} µs)`,
    );
  }
  return result;
}

/**
 * Rounds of the paced streams through svc with tracing off and through the svc that exports its
 * spans, in an order that rotates each round. Per round: what tracing adds to each percentile,
 * and each side's CPU per stream.
 */
async function runTracingPhase(phase: Phase, pairs: number) {
  const result = { added: addedSeries(), cpuOff: [] as number[], cpuOn: [] as number[], rows: [] as string[] };
  const sides = [svc, tracedSvc];
  for (let round = 0; round < pairs; round++) {
    const measured = await measureInTurn(sides, round, phase);
    const off = measured.get(svc)!;
    const on = measured.get(tracedSvc)!;
    pushAdded(result.added, on, off);
    result.cpuOff.push(off.cpu.svc);
    result.cpuOn.push(on.cpu.traced);
    result.rows.push(
      `  round ${round + 1}: tracing off ${format(off)} (svc ${off.cpu.svc.toFixed(0)} µs) | on ${format(on)} (svc ${on.cpu.traced.toFixed(0)} µs)`,
    );
  }
  return result;
}

/**
 * Rounds of the paced streams direct, through the one-deployment svc and through the svc with
 * three deployments per model, in an order that rotates each round. Per round: what the
 * three-deployment svc adds over direct (the latency phase's targets) and over the one-deployment svc.
 */
async function runDeploymentsPhase(phase: Phase, pairs: number) {
  const result = { added: addedSeries(), overOne: addedSeries(), cpuOne: [] as number[], cpuThree: [] as number[], rows: [] as string[] };
  const sides = [upstream, svc, deployedSvc];
  for (let round = 0; round < pairs; round++) {
    const measured = await measureInTurn(sides, round, phase);
    const direct = measured.get(upstream)!;
    const one = measured.get(svc)!;
    const three = measured.get(deployedSvc)!;
    pushAdded(result.added, three, direct);
    pushAdded(result.overOne, three, one);
    result.cpuOne.push(one.cpu.svc);
    result.cpuThree.push(three.cpu.deployed);
    result.rows.push(
      `  round ${round + 1}: direct ${format(direct)} | one deployment ${format(one)} (svc ${one.cpu.svc.toFixed(0)} µs, ${one.cpu.svcSystem.toFixed(0)} of it system) | three ${format(three)} (svc ${three.cpu.deployed.toFixed(0)} µs, ${three.cpu.deployedSystem.toFixed(0)} of it system)`,
      `    pauses: one deployment ${formatPauses(one)} | three ${formatPauses(three)}`,
    );
  }
  return result;
}

/** A thread's pauses over a phase's rounds: what its tail latency is made of (young collections copy the live streams' objects). */
const summarisePauses = (rounds: PauseStats[]) => {
  const of = (key: Exclude<keyof PauseStats, 'chunks' | 'connects'>) => median(rounds.map((round) => round[key]));
  return `${of('minorGcs')} young collections (longest ${of('minorGcMaxMs').toFixed(1)} ms, ${(of('promotedBytes') / 1048576).toFixed(1)} MiB promoted), ${of('majorGcs')} old (longest ${of('majorGcMaxMs').toFixed(1)} ms), event loop delay p99 ${of('loopDelayP99Ms').toFixed(1)} ms`;
};

/** With `--in-thread`: each proxy's time per content chunk in its own thread, median and p99 (median of rounds). */
function describeInThread(result: PhaseResult): string[] {
  const of = (rounds: PauseStats[], key: 'medianUs' | 'p99Us') => median(rounds.flatMap((round) => (round.chunks ? [round.chunks[key]] : []))).toFixed(0);
  if (!result.pauses.svc.some((round) => round.chunks)) return [];
  const hop = result.pauses.hop.length > 0 ? `; the bare proxy ${of(result.pauses.hop, 'medianUs')} / ${of(result.pauses.hop, 'p99Us')} µs` : '';
  return [
    `  in-thread time per content chunk, piece handed over to write (median of rounds): svc ${of(result.pauses.svc, 'medianUs')} / ${of(result.pauses.svc, 'p99Us')} µs${hop}`,
  ];
}

/** The lines a phase prints. */
function describePhase(title: string, result: PhaseResult): string[] {
  return [
    title,
    ...result.rows,
    `  throughput ratio svc/direct (median of pairs): ${median(result.rateRatios).toFixed(3)}`,
    `  CPU per stream (median of rounds): svc ${median(result.svcCpu).toFixed(0)} µs, the upstream itself ${median(result.upstreamCpu).toFixed(0)} µs; the load generator ${median(result.clientCpu.direct).toFixed(0)} µs direct, ${median(result.clientCpu.svc).toFixed(0)} µs through svc`,
    `  cores kept busy by the bench's threads (of ${cpus().length}): ${median(result.coresBusy.direct).toFixed(2)} direct, ${median(result.coresBusy.svc).toFixed(2)} through svc`,
    `  pauses per round (median of rounds): svc ${summarisePauses(result.pauses.svc)}; the upstream ${summarisePauses(result.pauses.direct)}`,
    `  promoted to the old generation per stream (median of rounds): svc ${median(result.promotedKiB.svc).toFixed(2)} KiB, the upstream ${median(result.promotedKiB.direct).toFixed(2)} KiB`,
    `  added time to first token (median of pairs): median ${median(result.added.firstMedian).toFixed(2)} ms, p99 ${median(result.added.firstP99).toFixed(2)} ms`,
    `  added time to last token (median of pairs): median ${median(result.added.lastMedian).toFixed(2)} ms, p99 ${median(result.added.lastP99).toFixed(2)} ms`,
    ...describeInThread(result),
  ];
}

if (profileDir) await mkdir(profileDir, { recursive: true });
const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-chat-'));
const serversModule = new URL('./chat-proxy-servers.ts', import.meta.url);
const upstream: WorkerServer = await startWorkerServer(serversModule, { kind: 'upstream', chunks, gaps, profileFile: profileFile('upstream') });
const svc: WorkerServer = await startWorkerServer(serversModule, {
  kind: 'svc',
  upstreamUrl: upstream.url,
  gaps,
  dataDir,
  databaseUrl: process.env.DATABASE_URL,
  profileFile: profileFile('svc'),
  traceChunks,
});
const bareProxy: WorkerServer = await startWorkerServer(serversModule, { kind: 'bare-proxy', upstreamUrl: upstream.url, traceChunks });
// The traced svc: its own data directory (the embedded database belongs to one server), its spans to a collector on loopback.
const collector = await startFakeOtlpCollector();
const tracedDataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-chat-traced-'));
const tracedSvc: WorkerServer = await startWorkerServer(serversModule, {
  kind: 'svc',
  upstreamUrl: upstream.url,
  gaps,
  dataDir: tracedDataDir,
  databaseUrl: process.env.DATABASE_URL,
  otlpEndpoint: collector.endpoint,
});
// The svc whose models each have three deployments of the same upstream (its own data directory, as the traced one).
const deployedDataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-chat-deployed-'));
const deployedSvc: WorkerServer = await startWorkerServer(serversModule, {
  kind: 'svc',
  upstreamUrl: upstream.url,
  gaps,
  dataDir: deployedDataDir,
  databaseUrl: process.env.DATABASE_URL,
  deployments: 3,
  profileFile: profileFile('deployed'),
});

const paced: Phase = { model: PACED, gapMs, spread: true };
const saturating: Phase = { model: SATURATE, gapMs: saturateGapMs, spread: false };

// Warm both paths (JIT, connection pools) before measuring.
for (let warm = 0; warm < 2; warm++) {
  await measure(upstream, 1000, saturating);
  await measure(svc, 1000, saturating);
  await measure(tracedSvc, 1000, saturating);
  await measure(deployedSvc, 1000, saturating);
}

// The deployments phase first: it compares the one-deployment svc with the three-deployment svc,
// which must come to it with the same history. Run last, it followed minutes of the other phases
// through the one-deployment svc alone, while the three-deployment svc sat idle and went cold
// (about 500 µs more CPU per stream for several rounds, gone when the phase runs alone).
const deployed = runs('deployments') ? await runDeploymentsPhase(paced, deploymentsRounds) : undefined;
const latency = runs('latency') ? await runPhase(paced, rounds, bareProxy) : undefined;
const saturation = runs('saturation') ? await runPhase(saturating, saturateRounds) : undefined;
const responses = runs('responses') ? await runResponsesPhase(paced, responsesRounds) : undefined;
const tracing = runs('tracing') ? await runTracingPhase(paced, tracingRounds) : undefined;
await svc.close();
await deployedSvc.close();
// Closing the traced svc flushes its last spans.
await tracedSvc.close();
await bareProxy.close();
await upstream.close();
await collector.close();
agent.destroy();
await rm(dataDir, { recursive: true, force: true });
await rm(tracedDataDir, { recursive: true, force: true });
await rm(deployedDataDir, { recursive: true, force: true });
const exportedKiB = collector.exports.reduce((sum, entry) => sum + entry.bytes, 0) / 1024;

/** Judged on the figures as reported (two decimals), so this line and the runner's table agree at the edge. */
const asReported = (values: number[]) => Number(median(values).toFixed(2));
const pacedSetting = `${concurrency} streams started spread, ${chunks} chunks ${gapMs} ms apart, ${rounds} pairs of ${durationMs / 1000} s`;
const saturateSetting = `${concurrency} streams started at once, ${chunks} chunks ${saturateGapMs} ms apart, ${saturateRounds} pairs of ${durationMs / 1000} s`;
process.stdout.write(
  [
    ...(latency ? describeLatency(latency) : []),
    ...(saturation ? describePhase(`chat-proxy, saturation (no target; added latency here is mostly waiting for a core): ${saturateSetting}`, saturation) : []),
    ...(responses ? describeResponses(responses) : []),
    ...(tracing ? describeTracing(tracing) : []),
    ...(deployed ? describeDeployments(deployed) : []),
    `  load average at the end: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(', ')}`,
    '',
  ].join('\n'),
);

function describeLatency(latency: PhaseResult): string[] {
  const addedMedian = Math.max(asReported(latency.added.firstMedian), asReported(latency.added.lastMedian));
  const addedP99 = Math.max(asReported(latency.added.firstP99), asReported(latency.added.lastP99));
  return [
    ...describePhase(`chat-proxy, latency: ${pacedSetting} (median/p99)`, latency),
    `  target added median < 1 ms: ${addedMedian < 1 ? 'met' : 'NOT met'}; added p99 < 3 ms: ${addedP99 < 3 ? 'met' : 'NOT met'}`,
    `  the hop itself: a bare pass-through proxy (node:http, no parsing) adds to first token median ${median(latency.hopAdded.firstMedian).toFixed(2)} ms, p99 ${median(latency.hopAdded.firstP99).toFixed(2)} ms; to last token median ${median(latency.hopAdded.lastMedian).toFixed(2)} ms, p99 ${median(latency.hopAdded.lastP99).toFixed(2)} ms; its CPU per stream ${median(latency.hopCpu).toFixed(0)} µs`,
  ];
}

function describeResponses(responses: Awaited<ReturnType<typeof runResponsesPhase>>): string[] {
  return [
    `chat-proxy, Responses: the latency phase's streams through svc's /v1/responses (translated) against its /v1/chat/completions, ${responsesRounds} rounds of ${durationMs / 1000} s`,
    ...responses.rows,
    `  added time to first token over chat (median of rounds): store false ${median(responses.addedFirst.responses).toFixed(2)} ms (target < 0.2 ms: ${asReported(responses.addedFirst.responses) < 0.2 ? 'met' : 'NOT met'}), store true ${median(responses.addedFirst.stored).toFixed(2)} ms`,
    `  svc CPU per stream (median of rounds): chat ${median(responses.cpu.chat).toFixed(0)} µs, responses ${median(responses.cpu.responses).toFixed(0)} µs (${median(responses.cpuRatio.responses).toFixed(2)}x; target <= 1.2x: ${median(responses.cpuRatio.responses) <= 1.2 ? 'met' : 'NOT met'}), store true ${median(responses.cpu.stored).toFixed(0)} µs (${median(responses.cpuRatio.stored).toFixed(2)}x)`,
  ];
}

function describeTracing(tracing: Awaited<ReturnType<typeof runTracingPhase>>): string[] {
  return [
    `chat-proxy, tracing: the latency phase's streams through svc with tracing on (OTLP/HTTP protobuf to a collector on loopback) against off, ${tracingRounds} rounds of ${durationMs / 1000} s`,
    ...tracing.rows,
    `  added by tracing (median of rounds): first token median ${median(tracing.added.firstMedian).toFixed(2)} ms, p99 ${median(tracing.added.firstP99).toFixed(2)} ms; last token median ${median(tracing.added.lastMedian).toFixed(2)} ms, p99 ${median(tracing.added.lastP99).toFixed(2)} ms`,
    `  svc CPU per stream (median of rounds): tracing off ${median(tracing.cpuOff).toFixed(0)} µs, on ${median(tracing.cpuOn).toFixed(0)} µs; the collector got ${collector.exports.length} exports, ${exportedKiB.toFixed(0)} KiB`,
  ];
}

function describeDeployments(deployed: Awaited<ReturnType<typeof runDeploymentsPhase>>): string[] {
  return [
    `chat-proxy, deployments: the latency phase's streams through a svc whose model has three deployments (weights 1:1:2) of the upstream, against direct and the one-deployment svc, ${deploymentsRounds} rounds of ${durationMs / 1000} s`,
    ...deployed.rows,
    `  added over direct (median of rounds): first token median ${median(deployed.added.firstMedian).toFixed(2)} ms, p99 ${median(deployed.added.firstP99).toFixed(2)} ms; last token median ${median(deployed.added.lastMedian).toFixed(2)} ms, p99 ${median(deployed.added.lastP99).toFixed(2)} ms (targets median < 1 ms: ${Math.max(asReported(deployed.added.firstMedian), asReported(deployed.added.lastMedian)) < 1 ? 'met' : 'NOT met'}, p99 < 3 ms: ${Math.max(asReported(deployed.added.firstP99), asReported(deployed.added.lastP99)) < 3 ? 'met' : 'NOT met'})`,
    `  added over one deployment (median of rounds): first token median ${median(deployed.overOne.firstMedian).toFixed(2)} ms, p99 ${median(deployed.overOne.firstP99).toFixed(2)} ms; svc CPU per stream ${median(deployed.cpuOne).toFixed(0)} µs one deployment, ${median(deployed.cpuThree).toFixed(0)} µs three`,
  ];
}

const cpuNote = (result: PhaseResult) =>
  `CPU per stream: svc ${median(result.svcCpu).toFixed(0)} µs, the upstream itself ${median(result.upstreamCpu).toFixed(0)} µs; bench threads kept ${median(result.coresBusy.svc).toFixed(2)} of ${cpus().length} cores busy through svc`;
/** svc's added latency, with what the bare pass-through proxy adds as the baseline (the hop's own cost; no ratio). */
const addedFigure = (figure: string, values: number[], hopValues: number[], ceiling: number) => ({
  figure,
  svc: asReported(values),
  baseline: asReported(hopValues),
  unit: 'ms',
  target: { on: 'svc' as const, op: '<' as const, value: ceiling },
  note: `svc minus direct, median of ${rounds} rounds (${pacedSetting}); baseline: a bare node:http pass-through proxy minus direct in the same rounds, the hop's own cost on this machine; ${latency ? cpuNote(latency) : ''}`,
});
reportFigures('chat-proxy', [
  ...(latency
    ? ([
        addedFigure('added time to first token, median', latency.added.firstMedian, latency.hopAdded.firstMedian, 1),
        addedFigure('added time to first token, p99', latency.added.firstP99, latency.hopAdded.firstP99, 3),
        addedFigure('added time to last token, median', latency.added.lastMedian, latency.hopAdded.lastMedian, 1),
        addedFigure('added time to last token, p99', latency.added.lastP99, latency.hopAdded.lastP99, 3),
      ] satisfies Figure[])
    : []),
  ...(saturation
    ? ([
        {
          figure: 'streamed completions per second, saturated',
          svc: Math.round(median(saturation.svcRates)),
          baseline: Math.round(median(saturation.directRates)),
          unit: 'streams/s',
          ratio: Number(median(saturation.rateRatios).toFixed(3)),
          note: `through svc against the upstream directly, median of pair ratios (${saturateSetting}); ${cpuNote(saturation)}`,
        },
        {
          figure: 'svc CPU per stream, saturated',
          svc: Math.round(median(saturation.svcCpu)),
          baseline: Math.round(median(saturation.upstreamCpu)),
          unit: 'µs',
          note: `svc's thread against the upstream's own thread per stream (${saturateSetting})`,
        },
        {
          figure: 'svc KiB promoted per stream, saturated',
          svc: Number(median(saturation.promotedKiB.svc).toFixed(2)),
          baseline: Number(median(saturation.promotedKiB.direct).toFixed(2)),
          unit: 'KiB',
          note: `bytes svc's young collections moved to the old generation, per stream, against the upstream's own thread (${saturateSetting}); objects that outlive their stream make young collections long, the p99's tail`,
        },
      ] satisfies Figure[])
    : []),
  ...(responses
    ? ([
        {
          figure: 'Responses (store false): added time to first token over chat, median',
          svc: asReported(responses.addedFirst.responses),
          unit: 'ms',
          target: { on: 'svc', op: '<', value: 0.2 },
          note: `svc's /v1/responses minus its /v1/chat/completions on the same upstream, median of ${responsesRounds} rounds (${pacedSetting}); store true adds ${median(responses.addedFirst.stored).toFixed(2)} ms`,
        },
        {
          figure: 'Responses (store false): svc CPU per stream',
          svc: Math.round(median(responses.cpu.responses)),
          baseline: Math.round(median(responses.cpu.chat)),
          unit: 'µs',
          // Oriented so higher is better: chat's CPU over the Responses route's, at least 1/1.2.
          ratio: Number((1 / median(responses.cpuRatio.responses)).toFixed(3)),
          target: { on: 'ratio', op: '>=', value: 0.833 },
          note: `svc's thread per stream, Responses against chat, median of per-round ratios ${median(responses.cpuRatio.responses).toFixed(2)}x (target at most 1.2x); store true ${Math.round(median(responses.cpu.stored))} µs (${median(responses.cpuRatio.stored).toFixed(2)}x)`,
        },
      ] satisfies Figure[])
    : []),
  ...(tracing
    ? ([
        {
          figure: 'tracing on: svc CPU per stream',
          svc: Math.round(median(tracing.cpuOn)),
          baseline: Math.round(median(tracing.cpuOff)),
          unit: 'µs',
          // Oriented so higher is better: tracing off's CPU over tracing on's.
          ratio: Number((median(tracing.cpuOff) / median(tracing.cpuOn)).toFixed(3)),
          note: `svc's thread per stream with its spans exported over OTLP (${collector.exports.length} exports, ${exportedKiB.toFixed(0)} KiB) against tracing off, median of ${tracingRounds} rounds (${pacedSetting}); no target, reported as the issue asks`,
        },
      ] satisfies Figure[])
    : []),
  ...(deployed
    ? ([
        {
          figure: 'three deployments: added time to first token, p99',
          svc: asReported(deployed.added.firstP99),
          unit: 'ms',
          target: { on: 'svc', op: '<', value: 3 },
          note: `svc with each model on three deployments (weights 1:1:2) minus direct, median of ${deploymentsRounds} rounds (${pacedSetting}); median ${median(deployed.added.firstMedian).toFixed(2)} ms; over one deployment ${median(deployed.overOne.firstMedian).toFixed(2)} ms; svc CPU per stream ${median(deployed.cpuThree).toFixed(0)} µs (one deployment ${median(deployed.cpuOne).toFixed(0)} µs)`,
        },
      ] satisfies Figure[])
    : []),
  ...(tracing
    ? ([
        {
          figure: 'tracing on: added time to first token, median',
          svc: asReported(tracing.added.firstMedian),
          unit: 'ms',
          note: `svc with tracing on minus off, median of ${tracingRounds} rounds (${pacedSetting}); p99 ${median(tracing.added.firstP99).toFixed(2)} ms; no target`,
        },
      ] satisfies Figure[])
    : []),
]);

// The keyed path (bench/keyed-path.ts): its own svc and upstream, after the figures above, so it leaves them as they were.
if (runs('keyed'))
  await runKeyedPath({
    route: 'chat',
    rounds: Number(values['keyed-rounds']),
    seconds: durationMs / 1000,
    concurrency: 16,
    chunks,
    out: (text) => process.stdout.write(text),
  });

// Issue 42's table against Portkey (bench/portkey-baseline.ts): its own servers, pinned, after everything else.
if (runs('portkey'))
  await runPortkeyBaseline({
    rounds: Number(values['portkey-rounds']),
    seconds: durationMs / 1000,
    chunks,
    gapMs,
    out: (text) => process.stdout.write(text),
  });
