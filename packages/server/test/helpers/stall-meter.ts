import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { threadCpuMs } from './loop-hold.ts';

/**
 * What the stall suite measures while one payload is handled: the longest hold of this process's
 * event loop (the test server runs in it; LoopHold, loop-hold.ts) and the worst latency of a
 * `/healthz` probe due every 50 ms over its own keep-alive socket, as another caller would see it.
 * Both count only the main thread's own CPU time: on a machine another suite also loads, a thread
 * that was not scheduled is slow in wall time without any stall of its own, and the same stall
 * shows either way (a thread held by its own work spends the whole wait on the CPU).
 */
export const STALL_BUDGET_MS = Number(process.env.SVC_STALL_BUDGET_MS ?? 100);
export const PROBE_EVERY_MS = 50;

export class HealthzProbe {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private worst = 0;
  private windowStart = 0;
  private windowStartCpu = 0;
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
   * It is capped by the main thread's CPU time since the answer before (a superset of the wait):
   * wall time the thread spent unscheduled is the machine's load, not a stall. Nothing before the
   * window's start counts (building a payload is the suite's own work).
   */
  private async run(): Promise<void> {
    let due = performance.now();
    let cpuMark = threadCpuMs();
    while (this.running) {
      this.inFlight = this.probe();
      await this.inFlight;
      const answered = performance.now();
      const cpu = threadCpuMs();
      const wallMs = answered - Math.max(due, this.windowStart);
      const cpuMs = cpu - Math.max(cpuMark, this.windowStartCpu);
      this.worst = Math.max(this.worst, Math.min(wallMs, cpuMs));
      cpuMark = cpu;
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
    this.windowStartCpu = threadCpuMs();
    return worst;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    this.agent.destroy();
  }
}
