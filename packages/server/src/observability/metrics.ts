import { Gauge, type Metric, Registry, collectDefaultMetrics } from 'prom-client';
import { EVENT_LOOP_DELAY_METRIC, EventLoopDelay } from './event-loop-delay.ts';
import { liveHeapAfterFullGc } from './heap-after-gc.ts';
import type { UsageEvent } from '../inference/usage-hook.ts';

export interface HttpMetrics {
  /** Process metrics (prom-client's defaults). */
  readonly registry: Registry;
  observe(route: string, method: string, status: number, seconds: number): void;
  /** One inference call, from the usage hook: counted per operation, model and outcome, with its tokens. */
  observeInference(event: UsageEvent): void;
  /** The whole Prometheus text exposition: process metrics, then the HTTP ones. */
  exposition(): Promise<string>;
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface RouteSeries {
  /** Per-bucket counts (not cumulative); the last slot is +Inf. */
  buckets: Float64Array;
  sum: number;
  count: number;
  statuses: Map<number, number>;
}

/**
 * prom-client's own event-loop histogram samples on a timer for as long as the process lives;
 * given this period (about 24 days, the longest a timer takes) it never wakes the loop, and its
 * metrics are left out: EventLoopDelay serves the same names, sampling only while there is work.
 */
const PROM_CLIENT_LOOP_SAMPLE_MS = 2 ** 31 - 1;

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * Request counts and latency histograms per route, in the Prometheus text format. Counted in
 * plain arrays and rendered at scrape time, because prom-client's labelled histogram costs
 * several microseconds per request on the hot path (measured by bench/http-overhead); the
 * process metrics still come from prom-client. One instance per server, never shared.
 */
export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  // prom-client's defaults but the loop's delay, which svc samples only while it works
  // (event-loop-delay.ts): prom-client's 10 ms timer woke an idle server 100 times a second, and
  // 100 ms still 10 times (issue 42).
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults, prefix: 'svc_', eventLoopMonitoringPrecision: PROM_CLIENT_LOOP_SAMPLE_MS });
  // The registry's array holds the metric objects themselves (its type names only their fields).
  for (const metric of defaults.getMetricsAsArray()) if (!EVENT_LOOP_DELAY_METRIC.test(metric.name)) registry.registerMetric(metric as unknown as Metric);
  const loopDelay = new EventLoopDelay(registry);
  liveHeapAfterFullGc();
  new Gauge({
    name: 'svc_nodejs_heap_live_bytes',
    help: 'V8 heap in use right after the latest full collection (0 before the first): the live heap, which grows only with a leak',
    registers: [registry],
    collect() {
      this.set(liveHeapAfterFullGc());
    },
  });
  const series = new Map<string, Map<string, RouteSeries>>();
  const inference = new Map<string, { operation: string; model: string; engine: string; ok: number; failed: number; tokens: number }>();

  return {
    registry,
    observe(route, method, status, seconds) {
      loopDelay.request(route);
      let byMethod = series.get(route);
      if (!byMethod) series.set(route, (byMethod = new Map()));
      let entry = byMethod.get(method);
      if (!entry) byMethod.set(method, (entry = { buckets: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0, statuses: new Map() }));
      let index = 0;
      while (index < BUCKETS.length && seconds > BUCKETS[index]!) index++;
      entry.buckets[index]!++;
      entry.sum += seconds;
      entry.count++;
      entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
    },
    observeInference(event) {
      const key = `${event.operation}\u0000${event.model}`;
      let entry = inference.get(key);
      if (!entry) inference.set(key, (entry = { operation: event.operation, model: event.model, engine: event.engine, ok: 0, failed: 0, tokens: 0 }));
      if (event.ok) entry.ok++;
      else entry.failed++;
      entry.tokens += event.usage.total_tokens;
    },
    async exposition() {
      const lines = ['# HELP svc_http_requests_total HTTP requests by route, method and status', '# TYPE svc_http_requests_total counter'];
      for (const [route, byMethod] of series) {
        for (const [method, entry] of byMethod) {
          for (const [status, count] of entry.statuses)
            lines.push(`svc_http_requests_total{route="${escapeLabel(route)}",method="${method}",status="${status}"} ${count}`);
        }
      }
      lines.push('# HELP svc_http_request_duration_seconds HTTP request latency by route and method', '# TYPE svc_http_request_duration_seconds histogram');
      for (const [route, byMethod] of series) {
        for (const [method, entry] of byMethod) {
          const labels = `route="${escapeLabel(route)}",method="${method}"`;
          let cumulative = 0;
          BUCKETS.forEach((bound, index) => {
            cumulative += entry.buckets[index]!;
            lines.push(`svc_http_request_duration_seconds_bucket{le="${bound}",${labels}} ${cumulative}`);
          });
          cumulative += entry.buckets[BUCKETS.length]!;
          lines.push(`svc_http_request_duration_seconds_bucket{le="+Inf",${labels}} ${cumulative}`);
          lines.push(`svc_http_request_duration_seconds_sum{${labels}} ${entry.sum}`);
          lines.push(`svc_http_request_duration_seconds_count{${labels}} ${entry.count}`);
        }
      }
      lines.push('# HELP svc_inference_calls_total Inference calls by operation, model, engine and outcome', '# TYPE svc_inference_calls_total counter');
      for (const entry of inference.values()) {
        const labels = `operation="${escapeLabel(entry.operation)}",model="${escapeLabel(entry.model)}",engine="${escapeLabel(entry.engine)}"`;
        lines.push(`svc_inference_calls_total{${labels},outcome="ok"} ${entry.ok}`, `svc_inference_calls_total{${labels},outcome="error"} ${entry.failed}`);
      }
      lines.push('# HELP svc_inference_tokens_total Tokens used by inference calls, by operation and model', '# TYPE svc_inference_tokens_total counter');
      for (const entry of inference.values())
        lines.push(
          `svc_inference_tokens_total{operation="${escapeLabel(entry.operation)}",model="${escapeLabel(entry.model)}",engine="${escapeLabel(entry.engine)}"} ${entry.tokens}`,
        );
      return `${await registry.metrics()}\n${lines.join('\n')}\n`;
    },
  };
}
