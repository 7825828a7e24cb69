/**
 * The three servers of bench/chat-proxy, each in its own worker thread (apart from the load
 * generator's event loop, and with its own CPU time):
 * - `upstream`: an OpenAI-compatible server streaming a fixed answer, `chunks` chunks
 *   apart by the gap its model asks for (`gaps`: model id to ms), then the usage chunk and
 *   `data: [DONE]` (vLLM's wire format);
 * - `svc`: the full server (contract adapter, auth, validation, model registry, the upstream
 *   provider, the chat stream's wire format, keep-alives, usage hook and metrics) with that
 *   upstream configured as `SVC_UPSTREAM_BASE_URL` (or, with `deployments`, as that many
 *   deployments of each model in a models file);
 * - `bare-proxy`: node:http piping each request to the upstream and its answer back, the floor
 *   a proxy cannot go under on this machine.
 */
import { subscribe } from 'node:diagnostics_channel';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Agent as HttpAgent, createServer as createHttpServer, request as httpRequest, ServerResponse, type Server as HttpServer } from 'node:http';
import { pipeline } from 'node:stream';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { constants as perfConstants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { GCProfiler } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { startSvcInThread, threadTid } from './svc-servers.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { median, percentile } from './stats.ts';

const { kind, upstreamUrl, dataDir, databaseUrl, chunks, gaps, profileFile, traceChunks, otlpEndpoint, deployments } = workerData as {
  kind: 'upstream' | 'svc' | 'bare-proxy';
  upstreamUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  chunks: number;
  /** The pause between two chunks, per model: one upstream serves both phases of the bench. */
  gaps: Record<string, number>;
  /** Where to write this thread's CPU profile, from once it listens (start-up left out) to close. */
  profileFile: string | undefined;
  /** Time each content chunk spends in this proxy's thread (`--in-thread`; see `watchChunks`). */
  traceChunks: boolean | undefined;
  /** svc only: export its traces there (OTLP/HTTP, the SDK's default protobuf), as OTEL_EXPORTER_OTLP_ENDPOINT does. */
  otlpEndpoint: string | undefined;
  /** svc only: serve each model through this many deployments (weights 1, 1, 2, ...) of the same upstream, from a models file. */
  deployments: number | undefined;
};

async function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  let counter = 0;
  const server = createHttpServer(async (request, response) => {
    let text = '';
    for await (const part of request) text += part;
    const { model, stream } = JSON.parse(text) as { model: string; stream?: boolean };
    const gapMs = gaps[model] ?? 0;
    const id = `chatcmpl-bench-${++counter}`;
    // A call with `stream: false` (the JSON request of the Portkey baseline) is answered at once, as one completion.
    if (stream === false) {
      const content = Array.from({ length: chunks }, (_, index) => `token${index} `).join('');
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created: 1_700_000_000,
          model,
          system_fingerprint: 'fp_bench',
          choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
          usage: { prompt_tokens: 5, completion_tokens: chunks, total_tokens: 5 + chunks },
        }),
      );
      return;
    }
    const chunk = (delta: Record<string, unknown>, finish: string | null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: 'fp_bench', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write(chunk({ role: 'assistant', content: '' }, null));
    for (let index = 0; index < chunks; index++) {
      if (gapMs > 0) await sleep(gapMs);
      response.write(chunk({ content: `token${index} ` }, null));
    }
    response.write(chunk({}, 'stop'));
    response.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage: { prompt_tokens: 5, completion_tokens: chunks, total_tokens: 5 + chunks } })}\n\n`,
    );
    response.end('data: [DONE]\n\n');
  });
  return listenOnLoopback(server);
}

/** Listens on a free loopback port, keeping client connections open between streams; `close` ends every connection. */
async function listenOnLoopback(server: HttpServer, onClose: () => void = () => {}): Promise<{ url: string; close(): Promise<void> }> {
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: async () => {
      server.closeAllConnections();
      onClose();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function startSvc(): Promise<{ url: string; close(): Promise<void> }> {
  // A worker thread has its own copy of the environment, read by svc's tracing and the OpenTelemetry SDK.
  if (otlpEndpoint) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = otlpEndpoint;
  const { svc, baseUrl } = await startSvcInThread(dataDir, databaseUrl, {
    SVC_OPEN_ACCESS: 'true',
    SVC_CATALOG_DEMO: 'off',
    ...(deployments
      ? { SVC_MODELS_FILE: await writeDeploymentsFile(deployments) }
      : { SVC_UPSTREAM_BASE_URL: upstreamUrl, SVC_UPSTREAM_MODELS: Object.keys(gaps ?? {}).join(',') }),
  });
  return { url: `${baseUrl}/v1`, close: () => svc.close() };
}

/**
 * A models file serving each bench model through `count` deployments, each its own upstream entry
 * (its own connection pool) at the same address, weighted 1, 1, 2, 1, ...: every call is balanced
 * and counted by the deployment pool, as in production with several regions or keys.
 */
async function writeDeploymentsFile(count: number): Promise<string> {
  const upstreams = Array.from({ length: count }, (_, index) => ({ id: `deployment-${index}`, base_url: upstreamUrl }));
  const models = Object.keys(gaps ?? {}).map((id) => ({
    id,
    capabilities: ['chat'],
    deployments: upstreams.map((upstream, index) => ({ upstream: upstream.id, weight: index === 2 ? 2 : 1 })),
  }));
  const file = path.join(dataDir, 'bench-deployments.json');
  await writeFile(file, JSON.stringify({ upstreams, models }));
  return file;
}

/**
 * The least a proxy can do: each request is passed to the upstream and its answer piped back,
 * with no parsing, no validation, no auth. What it adds over direct calls is the cost of one more
 * hop (a thread to wake, two sockets) on this machine: the floor under svc's added latency.
 */
async function startBareProxy(): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(upstreamUrl);
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 256 });
  const server = createHttpServer((request, response) => {
    const outgoing = httpRequest(
      { host: target.hostname, port: target.port, path: request.url, method: request.method, headers: request.headers, agent },
      (answer) => {
        // A client that left before the answer came (autocannon ends its run mid-request): nothing to pipe to.
        if (response.destroyed) {
          answer.resume();
          return;
        }
        // Before pipeline's own listener, so a piece is stamped before it is written on.
        if (chunkArrived) answer.on('data', chunkArrived);
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        pipeline(answer, response, () => {});
      },
    );
    pipeline(request, outgoing, () => {});
  });
  return listenOnLoopback(server, () => agent.destroy());
}

/** A content chunk of the bench's upstream, named by its stream and token: `"id":"chatcmpl-bench-7",...,"content":"token3 "`. */
const CONTENT_CHUNK = /"id":"chatcmpl-bench-(\d+)"[^\n]*?"content":"token(\d+) /g;

/** What `watchChunks` measured since the last ask: µs per content chunk inside the proxy's thread. */
export interface ChunkStats {
  medianUs: number;
  p99Us: number;
}

/**
 * How long each content chunk spends inside a proxy's own thread: from the moment the upstream's
 * piece is handed to the proxy's code (undici's `bodyChunkReceived` for svc, the answer's `data`
 * event for the bare proxy) to the `write` call that sends it on to the client. It leaves out
 * what the thread cannot help: the wait to be woken on a busy machine and the sockets. So the
 * end-to-end added latency minus this is the hop's share, and this is svc's code's (its JSON
 * parse, stream plumbing and collections included). Off by default: the stamping is work too.
 */
function watchChunks(): { arrived: (piece: Buffer | string) => void; take: () => ChunkStats } {
  const arrivedAt = new Map<string, number>();
  let spentUs: number[] = [];
  const arrived = (piece: Buffer | string) => {
    const now = performance.now();
    for (const match of String(piece).matchAll(CONTENT_CHUNK)) arrivedAt.set(`${match[1]}:${match[2]}`, now);
  };
  const write = ServerResponse.prototype.write;
  ServerResponse.prototype.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    if (arrivedAt.size > 0 && (typeof chunk === 'string' || Buffer.isBuffer(chunk))) {
      const now = performance.now();
      for (const match of String(chunk).matchAll(CONTENT_CHUNK)) {
        const key = `${match[1]}:${match[2]}`;
        const at = arrivedAt.get(key);
        if (at !== undefined) spentUs.push((now - at) * 1000);
        arrivedAt.delete(key);
      }
    }
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof write;
  return {
    arrived,
    take: () => {
      const taken = { medianUs: median(spentUs), p99Us: percentile(spentUs, 99) };
      spentUs = [];
      return taken;
    },
  };
}

const chunkWatch = traceChunks && kind !== 'upstream' ? watchChunks() : undefined;
const chunkArrived = chunkWatch?.arrived;
if (chunkWatch && kind === 'svc') subscribe('undici:request:bodyChunkReceived', (message) => chunkWatch.arrived((message as { chunk: Buffer }).chunk));

/** Starts the CPU profiler of this thread; the returned function stops it and writes the profile. */
async function startProfile(file: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
  };
}

/** This thread's pauses since the last ask: its garbage collections (young and old) and its event loop's delay. */
export interface PauseStats {
  minorGcs: number;
  minorGcMaxMs: number;
  majorGcs: number;
  majorGcMaxMs: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /**
   * Bytes moved to the old generation by the young collections (old space's growth across each):
   * the objects that outlived the collection before, which each young collection copies. A high
   * figure means something keeps request objects alive for seconds.
   */
  promotedBytes: number;
  /** With `--in-thread`: the time content chunks spent in this proxy's thread. */
  chunks?: ChunkStats;
  /** svc only: connections its upstream pools opened (undici's `client:connected`); each is a connect, a parser and a socket's set-up on both sides. */
  connects?: number;
}

/** The old generation's spaces: what a young collection promotes into. */
const OLD_SPACES = new Set(['old_space', 'code_space', 'large_object_space']);

type GcStatistic = {
  gcType: string;
  beforeGC: { heapSpaceStatistics: Array<{ spaceName: string; spaceUsedSize: number }> };
  afterGC: { heapSpaceStatistics: Array<{ spaceName: string; spaceUsedSize: number }> };
};
const oldUsed = (spaces: Array<{ spaceName: string; spaceUsedSize: number }>) =>
  spaces.reduce((sum, space) => sum + (OLD_SPACES.has(space.spaceName) ? space.spaceUsedSize : 0), 0);

const noCollections = () => ({ minorGcs: 0, minorGcMaxMs: 0, majorGcs: 0, majorGcMaxMs: 0 });

function watchPauses(): () => PauseStats {
  let stats = noCollections();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const minor = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR;
      if (minor) {
        stats.minorGcs++;
        stats.minorGcMaxMs = Math.max(stats.minorGcMaxMs, entry.duration);
      } else {
        stats.majorGcs++;
        stats.majorGcMaxMs = Math.max(stats.majorGcMaxMs, entry.duration);
      }
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let profiler = new GCProfiler();
  profiler.start();
  return () => {
    const report = profiler.stop() as { statistics: GcStatistic[] } | undefined;
    profiler = new GCProfiler();
    profiler.start();
    let promotedBytes = 0;
    for (const gc of report?.statistics ?? [])
      if (gc.gcType === 'Scavenge') promotedBytes += Math.max(0, oldUsed(gc.afterGC.heapSpaceStatistics) - oldUsed(gc.beforeGC.heapSpaceStatistics));
    const taken = { ...stats, loopDelayP99Ms: delay.percentile(99) / 1e6, loopDelayMaxMs: delay.max / 1e6, promotedBytes };
    stats = noCollections();
    delay.reset();
    return taken;
  };
}

/** Connections svc's upstream pools opened since the last ask. */
let connects = 0;
if (kind === 'svc') subscribe('undici:client:connected', () => connects++);
const takeConnects = () => {
  const taken = connects;
  connects = 0;
  return taken;
};

const server = kind === 'upstream' ? await startUpstream() : kind === 'svc' ? await startSvc() : await startBareProxy();
const takePauses = watchPauses();
const stopProfile = profileFile ? await startProfile(profileFile) : undefined;
parentPort!.postMessage({ url: server.url });
parentPort!.on('message', (message: string) => {
  if (message === 'cpu') parentPort!.postMessage({ cpu: process.threadCpuUsage() });
  if (message === 'tid') parentPort!.postMessage({ tid: threadTid() });
  if (message === 'pauses')
    parentPort!.postMessage({
      pauses: { ...takePauses(), ...(chunkWatch ? { chunks: chunkWatch.take() } : {}), ...(kind === 'svc' ? { connects: takeConnects() } : {}) },
    });
  if (message === 'close')
    void (async () => {
      await stopProfile?.();
      await server.close();
      process.exit(0);
    })();
});
