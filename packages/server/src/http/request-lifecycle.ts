import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { HttpMetrics } from '../observability/metrics.ts';
import type { RequestState } from './request-state.ts';

/**
 * After the answer: sets `x-svc-latency-ms` and `Server-Timing` (unless a stream already sent
 * its headers), counts the request per route and logs one line. Runs for error answers too.
 */
export function finishRequest(ctx: Context, state: RequestState, log: Logger, metrics: HttpMetrics): void {
  const latencyMs = performance.now() - state.startedAt;
  const { req, res } = ctx;
  if (!res.headersSent) {
    res.setHeader('x-svc-latency-ms', latencyMs.toFixed(1));
    if (state.hasTiming) res.setHeader('server-timing', state.timing.header());
  }
  const route = state.routeId ?? 'unmatched';
  const method = req.method!;
  const status = res.statusCode;
  metrics.observe(route, method, status, latencyMs / 1000);
  if (log.isLevelEnabled('info')) {
    state.log.info({ route, method, status, latencyMs: Math.round(latencyMs * 10) / 10, principal: state.principal?.kind ?? 'anonymous' }, 'request');
  }
}
