import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LoopHold, threadCpuMs } from './loop-hold.ts';
import { HealthzProbe, PROBE_EVERY_MS } from './stall-meter.ts';

/**
 * What one request costs the server, measured in the process the test server runs in (issue 40's
 * amplification): the bytes it answered, the memory it held (the peak of the JS heap and the
 * buffers outside it over the request, above a collected baseline), the main thread's CPU time,
 * and, as the stall suite does, the longest loop hold and the worst `/healthz` probe, both counted
 * by the thread's CPU time so another suite loading the machine fails nothing.
 */
export interface RequestCost {
  status: number;
  requestBytes: number;
  answerBytes: number;
  /** Peak heap + external memory above the collected baseline, in bytes. */
  heldBytes: number;
  cpuMs: number;
  loopMs: number;
  healthzMs: number;
  /** The answer's first 64 KiB as text (to read a refusal's code); the rest is counted, not kept. */
  head: string;
  headers: http.IncomingHttpHeaders;
}

/** One raw HTTP request: what a hostile caller sends, bytes as they are. */
export interface RawRequest {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The source address (127.0.0.2: another client of a loopback server). */
  localAddress?: string;
}

const KEPT_ANSWER_BYTES = 65_536;
const ANSWER_DEADLINE_MS = 120_000;

// A collection before each window, so the baseline is what is live, not what is waiting to be collected.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const liveBytes = () => {
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
};

/** Sends one request and reads its answer through, counting the bytes and keeping only the head. */
export function sendRaw(request: RawRequest, agent: http.Agent): Promise<Omit<RequestCost, 'heldBytes' | 'cpuMs' | 'loopMs' | 'healthzMs'>> {
  const target = new URL(request.url);
  const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  const headers: Record<string, string> = { ...request.headers };
  if (body) headers['content-length'] = String(body.length);
  const requestBytes = (body?.length ?? 0) + Object.entries(headers).reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0);
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      {
        agent: request.localAddress ? undefined : agent,
        localAddress: request.localAddress,
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: request.method ?? (body ? 'POST' : 'GET'),
        headers,
      },
      (response) => {
        const kept: Buffer[] = [];
        let answerBytes = 0;
        response.on('data', (chunk: Buffer) => {
          if (answerBytes < KEPT_ANSWER_BYTES) kept.push(chunk);
          answerBytes += chunk.length;
        });
        response.on('end', () => {
          clearTimeout(timer);
          const head = Buffer.concat(kept).toString('utf8').slice(0, KEPT_ANSWER_BYTES);
          resolve({ status: response.statusCode ?? 0, answerBytes, head, requestBytes, headers: response.headers });
        });
        response.on('error', reject);
      },
    );
    const timer = setTimeout(() => outgoing.destroy(new Error(`no answer within ${ANSWER_DEADLINE_MS} ms`)), ANSWER_DEADLINE_MS);
    outgoing.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    outgoing.end(body);
  });
}

export class AmplificationMeter {
  private readonly loop = new LoopHold();
  private readonly probe: HealthzProbe;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  private peak = 0;
  private readonly sampler = setInterval(() => {
    this.peak = Math.max(this.peak, liveBytes());
  }, 5);

  constructor(healthzUrl: string) {
    this.probe = new HealthzProbe(healthzUrl);
  }

  /**
   * Runs `work` (one request, or a few sent one after another) in a window of its own and answers
   * what it cost; `repeat` sends the same request that many times, one after another, and answers
   * the CPU per request (the thread's CPU moves in 4 ms ticks, so a cheap request is timed over several).
   */
  async measure(request: RawRequest, repeat = 1): Promise<RequestCost> {
    // Building and encoding the body is the caller's work, not the server's: done before the window.
    if (typeof request.body === 'string') request = { ...request, body: Buffer.from(request.body, 'utf8') };
    // The earlier rows' garbage is collected before the window, and the loop's next tick (the
    // sleep) sees that collection's gap before the window is taken: collected after the sleep, the
    // forced collection (30-60 ms with the test server in this process) fell into the window's
    // first gap, with the request's own synchronous send, and read as the request's hold.
    collect();
    await sleep(15);
    await this.probe.take();
    const baseline = liveBytes();
    this.peak = baseline;
    this.loop.take();
    const cpuStart = threadCpuMs();
    let answer: Awaited<ReturnType<typeof sendRaw>> = { status: 0, answerBytes: 0, head: '', requestBytes: 0, headers: {} };
    for (let sent = 0; sent < repeat; sent++) answer = await sendRaw(request, this.agent);
    const cpuMs = (threadCpuMs() - cpuStart) / repeat;
    this.peak = Math.max(this.peak, liveBytes());
    const heldBytes = this.peak - baseline;
    // Work the request left behind (a write, a log line) shows by the next probe.
    await sleep(PROBE_EVERY_MS + 10);
    const healthzMs = await this.probe.take();
    const loopMs = this.loop.take();
    return { ...answer, heldBytes, cpuMs, loopMs, healthzMs };
  }

  async stop(): Promise<void> {
    clearInterval(this.sampler);
    this.loop.stop();
    await this.probe.stop();
    this.agent.destroy();
  }
}
