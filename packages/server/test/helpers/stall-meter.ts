import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What the stall suite measures while one payload is handled: the worst event-loop delay of this
 * process (the test server runs in it) and the worst latency of a `/healthz` probe due every
 * 50 ms over its own keep-alive socket, as another caller would see it.
 */
export const STALL_BUDGET_MS = Number(process.env.SVC_STALL_BUDGET_MS ?? 100);
export const PROBE_EVERY_MS = 50;

export class LoopDelay {
  private readonly histogram = monitorEventLoopDelay({ resolution: 10 });
  constructor() {
    this.histogram.enable();
  }
  /** The worst delay since the last call, in ms; starts a new window. */
  take(): number {
    const worst = this.histogram.count > 0 ? this.histogram.max / 1e6 : 0;
    this.histogram.reset();
    return worst;
  }
  stop(): void {
    this.histogram.disable();
  }
}

export class HealthzProbe {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private worst = 0;
  private windowStart = 0;
  private inFlight: Promise<void> = Promise.resolve();
  private running = true;
  private readonly loop: Promise<void>;
  private readonly url: string;

  constructor(url: string) {
    this.url = url;
    this.loop = this.run();
  }

  /**
   * Latency counts from when a probe was due, not from when it left: the probe shares the
   * server's thread, so during a stall it cannot even be sent, while another caller's would wait.
   * Nothing before the window's start counts (building a payload is the suite's own work).
   */
  private async run(): Promise<void> {
    let due = performance.now();
    while (this.running) {
      this.inFlight = this.probe();
      await this.inFlight;
      const answered = performance.now();
      this.worst = Math.max(this.worst, answered - Math.max(due, this.windowStart));
      due = Math.max(due + PROBE_EVERY_MS, answered);
      await sleep(Math.max(0, due - answered));
    }
  }

  private probe(): Promise<void> {
    return new Promise((resolve) => {
      const request = http.get(this.url, { agent: this.agent }, (response) => {
        response.resume();
        response.on('end', resolve);
        response.on('error', () => resolve());
      });
      // A failed probe is as slow as it took; the stall figure is what matters here.
      request.on('error', () => resolve());
    });
  }

  /** The worst probe latency since the last call, in ms, counting a probe still in flight; starts a new window. */
  async take(): Promise<number> {
    await this.inFlight;
    const worst = this.worst;
    this.worst = 0;
    this.windowStart = performance.now();
    return worst;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    this.agent.destroy();
  }
}
