/**
 * Issue 42's table: svc against Portkey's open-source gateway (bench/portkey-gateway.ts) and the
 * bare node:http hop, with the operator token and a developer key, over one upstream (the
 * chat-proxy bench's). Every gateway runs in this process tree: the bare hop and svc
 * (bench/keyed-path-server.ts, its three credentials) as worker threads, Portkey as a child
 * process. Pinned where the machine has two cores and `taskset`: each gateway's JavaScript thread
 * (all of Portkey's process) on core 0, the load generator (this thread, autocannon) and the
 * upstream's thread on core 1. Sides are measured in an order that rotates each round. Figures
 * (medians across rounds):
 *
 * - added to first token at c=16: 16 streams kept open (`chunks` chunks `gap` ms apart, started
 *   spread over one stream's length), each side's median time to first token minus direct's in
 *   the same round;
 * - JSON at c=64, saturated: a non-streamed chat completion (`stream: false`) from autocannon
 *   with 64 connections: requests/s, and the gateway thread's CPU per request.
 *
 * Printed: the table, and svc's developer key over Portkey for each figure. When Portkey does not
 * start (or its first call fails), the bench says why and goes on with the other sides.
 */
import { execFileSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { createTestDatabase } from '@svc/testing/test-database';
import { type PortkeyGateway, startPortkey } from './portkey-gateway.ts';
import { reportFigures } from './report.ts';
import { median } from './stats.ts';
import { startWorkerServer } from './worker-server.ts';

const MODEL = 'bench-chat';
const STREAM_BODY = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say something, one token at a time.' }], stream: true });
const JSON_BODY = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say something.' }], stream: false });
const FIRST_TOKEN = '"content":"token';

type SideName = 'direct' | 'hop' | 'portkey' | 'operator' | 'key';
interface Side {
  name: SideName;
  label: string;
  url: string;
  headers: Record<string, string>;
  /** CPU µs of the side's gateway thread so far (for direct: the upstream's, for scale). */
  cpu: () => Promise<number>;
}

/** Pins one thread (a kernel thread id) to one core; false when taskset refuses or is absent. */
function pin(tid: number | undefined, core: string): boolean {
  if (tid === undefined) return false;
  try {
    execFileSync('taskset', ['-p', '-c', core, String(tid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** One stream: ms to the first content chunk. */
function firstToken(url: URL, headers: Record<string, string>, agent: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstMs = -1;
    let text = '';
    const outgoing = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(STREAM_BODY), ...headers } },
      (response) => {
        if (response.statusCode !== 200) reject(new Error(`${url}: status ${response.statusCode}`));
        response.setEncoding('utf8');
        response.on('data', (piece: string) => {
          if (firstMs >= 0) return;
          text += piece;
          if (text.includes(FIRST_TOKEN)) firstMs = performance.now() - started;
        });
        response.on('end', () => (firstMs < 0 ? reject(new Error(`${url}: no token in the stream`)) : resolve(firstMs)));
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(STREAM_BODY);
  });
}

export async function runPortkeyBaseline(options: {
  rounds: number;
  seconds: number;
  chunks: number;
  gapMs: number;
  out: (text: string) => void;
}): Promise<void> {
  const { rounds, chunks, gapMs } = options;
  const ms = options.seconds * 1000;
  const pinning = cpus().length >= 2 && pin(process.pid, '1');
  const database = await createTestDatabase({ adminUrl: process.env.BENCH_DATABASE_URL, prefix: 'svc_bench_portkey' });
  const servers = new URL('./chat-proxy-servers.ts', import.meta.url);
  const upstream = await startWorkerServer(servers, { kind: 'upstream', chunks, gaps: { [MODEL]: gapMs } });
  const hop = await startWorkerServer(servers, { kind: 'bare-proxy', upstreamUrl: upstream.url });
  const svc = await startWorkerServer(new URL('./keyed-path-server.ts', import.meta.url), {
    dataDir: database.dataDir,
    databaseUrl: database.databaseUrl,
    upstreamUrl: upstream.url,
  });
  let portkey: PortkeyGateway | undefined;
  let portkeyFailure: string | undefined;
  try {
    portkey = await startPortkey(upstream.url, pinning ? 0 : undefined);
    // One call of each kind before the rounds: a gateway that starts but cannot stream is left out, with the reason.
    await firstToken(new URL(`${portkey.url}/chat/completions`), { authorization: 'Bearer sk-bench', ...portkey.headers }, new Agent());
  } catch (error) {
    portkeyFailure = (error as Error).message;
    await portkey?.close();
    portkey = undefined;
  }
  try {
    if (pinning) {
      pin(await upstream.ask<number>('tid', 'tid'), '1');
      pin(await hop.ask<number>('tid', 'tid'), '0');
      pin(await svc.ask<number>('tid', 'tid'), '0');
    }
    const tokens = await svc.ask<Record<'operator' | 'key', string>>('credentials', 'credentials');
    const sides: Side[] = [
      { name: 'direct', label: 'direct', url: upstream.url, headers: {}, cpu: () => upstream.cpuMicros() },
      { name: 'hop', label: 'bare hop', url: hop.url, headers: {}, cpu: () => hop.cpuMicros() },
      ...(portkey
        ? [
            {
              name: 'portkey' as const,
              label: 'Portkey',
              url: portkey.url,
              headers: { authorization: 'Bearer sk-bench', ...portkey.headers },
              cpu: async () => portkey!.cpuMicros(),
            },
          ]
        : []),
      { name: 'operator', label: 'svc operator', url: `${svc.url}/v1`, headers: { authorization: `Bearer ${tokens.operator}` }, cpu: () => svc.cpuMicros() },
      { name: 'key', label: 'svc developer key', url: `${svc.url}/v1`, headers: { authorization: `Bearer ${tokens.key}` }, cpu: () => svc.cpuMicros() },
    ];

    /** 16 streams kept open for `duration` ms, started spread over one stream's length: the median ms to first token. */
    const streams = async (side: Side, duration: number) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 16 });
      const url = new URL(`${side.url}/chat/completions`);
      const times: number[] = [];
      const until = performance.now() + duration;
      await Promise.all(
        Array.from({ length: 16 }, async (_, worker) => {
          await sleep((worker * chunks * gapMs) / 16);
          while (performance.now() < until) times.push(await firstToken(url, side.headers, agent));
        }),
      );
      agent.destroy();
      return median(times);
    };
    /** Saturated JSON calls from 64 connections: requests/s and the side's CPU µs per request. */
    const saturate = async (side: Side, duration: number) => {
      const before = await side.cpu();
      const result = await autocannon({
        url: `${side.url}/chat/completions`,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...side.headers },
        body: JSON_BODY,
        connections: 64,
        duration: duration / 1000,
      });
      const after = await side.cpu();
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${side.label}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      const calls = Math.max(1, result.requests.total);
      return { perSecond: result.requests.total / (duration / 1000), cpuPerRequest: (after - before) / calls };
    };

    for (const side of sides) {
      await streams(side, 1000);
      await saturate(side, 1000);
    }
    const added = new Map<SideName, number[]>(sides.map((side) => [side.name, []]));
    const rate = new Map<SideName, number[]>(sides.map((side) => [side.name, []]));
    const cpu = new Map<SideName, number[]>(sides.map((side) => [side.name, []]));
    const rows: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = sides.map((_, index) => sides[(index + round) % sides.length]!);
      const first = new Map<SideName, number>();
      for (const side of order) first.set(side.name, await streams(side, ms));
      for (const side of order) {
        const result = await saturate(side, ms);
        rate.get(side.name)!.push(result.perSecond);
        cpu.get(side.name)!.push(result.cpuPerRequest);
      }
      for (const side of sides) added.get(side.name)!.push(first.get(side.name)! - first.get('direct')!);
      rows.push(
        `  round ${round + 1}: ${sides.map((side) => `${side.label} +${(first.get(side.name)! - first.get('direct')!).toFixed(2)} ms, ${rate.get(side.name)!.at(-1)!.toFixed(0)} req/s, ${cpu.get(side.name)!.at(-1)!.toFixed(0)} µs`).join(' | ')}`,
      );
    }

    const gateways = sides.filter((side) => side.name !== 'direct');
    const cell = (values: number[], digits: number) => median(values).toFixed(digits).padStart(10);
    const table = [
      `  ${'figure'.padEnd(46)}${gateways.map((side) => side.label.padStart(19)).join('')}`,
      `  ${'added to first token, c=16 (ms)'.padEnd(46)}${gateways.map((side) => cell(added.get(side.name)!, 2).padStart(19)).join('')}`,
      `  ${'CPU per saturated JSON request (µs)'.padEnd(46)}${gateways.map((side) => cell(cpu.get(side.name)!, 0).padStart(19)).join('')}`,
      `  ${'JSON requests/s at c=64'.padEnd(46)}${gateways.map((side) => cell(rate.get(side.name)!, 0).padStart(19)).join('')}`,
    ];
    const ratios = portkey
      ? (() => {
          const key = (values: Map<SideName, number[]>) => median(values.get('key')!);
          const theirs = (values: Map<SideName, number[]>) => median(values.get('portkey')!);
          return [
            `  svc developer key / Portkey: added first token ${(key(added) / theirs(added)).toFixed(2)}x, CPU per JSON request ${(key(cpu) / theirs(cpu)).toFixed(2)}x (lower is better), JSON requests/s ${(key(rate) / theirs(rate)).toFixed(2)}x (higher is better)`,
            `  svc operator / Portkey: added first token ${(median(added.get('operator')!) / theirs(added)).toFixed(2)}x, CPU per JSON request ${(median(cpu.get('operator')!) / theirs(cpu)).toFixed(2)}x, JSON requests/s ${(median(rate.get('operator')!) / theirs(rate)).toFixed(2)}x`,
          ];
        })()
      : [`  Portkey left out: ${portkeyFailure}`];
    if (portkey) {
      // Oriented so higher is better: Portkey's figure over the developer key's for costs, the key's over Portkey's for throughput.
      const of = (values: Map<SideName, number[]>, name: SideName) => median(values.get(name)!);
      const versus = (figure: string, ratio: number, svc: number, baseline: number, unit: string) => ({
        figure,
        svc: Number(svc.toFixed(2)),
        baseline: Number(baseline.toFixed(2)),
        unit,
        ratio: Number(ratio.toFixed(3)),
        target: { on: 'ratio' as const, op: '>=' as const, value: 1 },
        note: `svc with a developer key against Portkey's gateway, medians of ${rounds} rotating rounds (${database.kind} database${pinning ? ', gateways on core 0, load on core 1' : ''}); svc operator ${of(added, 'operator').toFixed(2)} ms, ${of(cpu, 'operator').toFixed(0)} µs, ${of(rate, 'operator').toFixed(0)} req/s; bare hop ${of(added, 'hop').toFixed(2)} ms, ${of(cpu, 'hop').toFixed(0)} µs, ${of(rate, 'hop').toFixed(0)} req/s`,
      });
      reportFigures('chat-proxy', [
        versus(
          'added time to first token at c=16, developer key vs Portkey',
          of(added, 'portkey') / of(added, 'key'),
          of(added, 'key'),
          of(added, 'portkey'),
          'ms',
        ),
        versus('CPU per saturated JSON request, developer key vs Portkey', of(cpu, 'portkey') / of(cpu, 'key'), of(cpu, 'key'), of(cpu, 'portkey'), 'µs'),
        versus('JSON requests/s at c=64, developer key vs Portkey', of(rate, 'key') / of(rate, 'portkey'), of(rate, 'key'), of(rate, 'portkey'), 'requests/s'),
      ]);
    }
    options.out(
      [
        `portkey baseline (${database.kind} database): ${rounds} rotating rounds x ${options.seconds} s per side and figure; streams of ${chunks} chunks ${gapMs} ms apart; ${pinning ? 'gateways on core 0, load and upstream on core 1' : 'not pinned (needs 2 cores and taskset)'}; CPU is each gateway's main JavaScript thread; direct's is the upstream's`,
        ...rows,
        ...table,
        ...ratios,
        `  load average ${loadavg()
          .map((value) => value.toFixed(2))
          .join(' ')}`,
        '',
      ].join('\n'),
    );
  } finally {
    await portkey?.close();
    await svc.close();
    await hop.close();
    await upstream.close();
    await database.drop();
    if (pinning) pin(process.pid, `0-${cpus().length - 1}`);
  }
}
