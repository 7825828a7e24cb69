import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

/** How often the event loop's delay is sampled while the server works. */
const SAMPLE_MS = 100;
/** How long after the last request the sampling goes on: an idle loop has no delay to sample. */
const BUSY_WINDOW_MS = 10_000;
/**
 * Requests that arrive on a clock, whoever else calls: a liveness probe, a readiness probe or a
 * Prometheus scrape every few seconds would keep an otherwise idle server sampling for ever.
 */
const CLOCKWORK_ROUTES = new Set(['system.healthz', 'system.readyz', 'system.health', 'system.apiHealth', 'system.metrics']);

/** The names prom-client's default metrics give the loop's delay (with svc's prefix); `EventLoopDelay` serves them instead. */
export const EVENT_LOOP_DELAY_METRIC = /^svc_nodejs_eventloop_lag_/;

/**
 * The event loop's delay (`svc_nodejs_eventloop_lag_*`, prom-client's names and meanings),
 * sampled every 100 ms while requests arrive and for 10 s after the last, and not at all while
 * the server is idle. prom-client samples on a timer for ever, and that timer alone woke an idle
 * server 10 times a second, about half of its idle CPU (issue 42: idle costs nothing). What an
 * idle period has no sample of it has no delay in: nothing runs.
 *
 * @example
 * const delay = new EventLoopDelay(registry);
 * delay.request('inference.chat'); // from each request's end
 */
export class EventLoopDelay {
  readonly #histogram = monitorEventLoopDelay({ resolution: SAMPLE_MS });
  #sampling = false;
  /** Requests counted since the last look of the busy window's timer. */
  #requests = 0;

  constructor(registry: Registry) {
    const histogram = this.#histogram;
    const seconds = (nanoseconds: number) => (histogram.count === 0 ? 0 : nanoseconds / 1e9);
    const lag = new Gauge({
      name: 'svc_nodejs_eventloop_lag_seconds',
      help: 'Lag of event loop in seconds.',
      registers: [registry],
      aggregator: 'average',
      // One metric's collect sets them all, then starts a new period, as prom-client's does: the
      // summaries before its first await (the registry reads every metric at once).
      async collect() {
        for (const [gauge, value] of summaries) gauge.set(seconds(value()));
        histogram.reset();
        const start = performance.now();
        await new Promise((resolve) => setImmediate(resolve));
        lag.set((performance.now() - start) / 1000);
      },
    });
    const summary = (name: string, help: string) =>
      new Gauge({ name: `svc_nodejs_eventloop_lag_${name}_seconds`, help, registers: [registry], aggregator: 'average' });
    const summaries: Array<[Gauge, () => number]> = [
      [summary('min', 'The minimum recorded event loop delay.'), () => histogram.min],
      [summary('max', 'The maximum recorded event loop delay.'), () => histogram.max],
      [summary('mean', 'The mean of the recorded event loop delays.'), () => histogram.mean],
      [summary('stddev', 'The standard deviation of the recorded event loop delays.'), () => histogram.stddev],
      [summary('p50', 'The 50th percentile of the recorded event loop delays.'), () => histogram.percentile(50)],
      [summary('p90', 'The 90th percentile of the recorded event loop delays.'), () => histogram.percentile(90)],
      [summary('p99', 'The 99th percentile of the recorded event loop delays.'), () => histogram.percentile(99)],
    ];
  }

  /** True while the loop is sampled. */
  get sampling(): boolean {
    return this.#sampling;
  }

  /** A request of `route` ended: the loop is sampled from now until a quiet BUSY_WINDOW_MS. */
  request(route: string): void {
    if (CLOCKWORK_ROUTES.has(route)) return;
    this.#requests++;
    if (this.#sampling) return;
    this.#sampling = true;
    this.#histogram.enable();
    this.#watch();
  }

  /** Looks once per BUSY_WINDOW_MS whether a request came; stops sampling after a window without one. */
  #watch(): void {
    const seen = this.#requests;
    setTimeout(() => {
      if (this.#requests !== seen) return this.#watch();
      this.#histogram.disable();
      this.#sampling = false;
    }, BUSY_WINDOW_MS).unref();
  }
}
