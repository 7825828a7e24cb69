import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface HttpMetrics {
  readonly registry: Registry;
  observe(route: string, method: string, status: number, seconds: number): void;
}

/** One registry per server, so several servers in one process (tests) never share counts. */
export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  const requests = new Counter({ name: 'svc_http_requests_total', help: 'HTTP requests by route, method and status', labelNames: ['route', 'method', 'status'], registers: [registry] });
  const latency = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by route and method',
    labelNames: ['route', 'method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return {
    registry,
    observe(route, method, status, seconds) {
      requests.inc({ route, method, status: String(status) });
      latency.observe({ route, method }, seconds);
    },
  };
}
