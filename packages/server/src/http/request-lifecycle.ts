import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { HttpMetrics } from '../observability/metrics.ts';
import { requestIdFrom } from './request-id.ts';
import type { RequestState } from './request-state.ts';
import { ServerTiming } from './server-timing.ts';

/**
 * First in the chain: gives the request its id, times it, and after the answer sets
 * `x-request-id`, `x-svc-latency-ms` and `Server-Timing`, logs one line and counts it.
 * Comes before the error handler so error answers carry the same headers.
 */
export function requestLifecycle(log: Logger, metrics: HttpMetrics) {
  return async function trackRequest(ctx: Context, next: Next): Promise<void> {
    const state = ctx.state as RequestState;
    state.requestId = requestIdFrom(ctx.headers['x-request-id']);
    state.startedAt = performance.now();
    state.timing = new ServerTiming();
    state.log = log.child({ requestId: state.requestId });
    ctx.set('x-request-id', state.requestId);
    try {
      await next();
    } finally {
      const latencyMs = performance.now() - state.startedAt;
      if (!ctx.headerSent) {
        ctx.set('x-svc-latency-ms', latencyMs.toFixed(1));
        if (state.timing.size > 0) ctx.set('server-timing', state.timing.header());
      }
      const route = state.routeId ?? 'unmatched';
      metrics.observe(route, ctx.method, ctx.status, latencyMs / 1000);
      state.log.info({ route, method: ctx.method, status: ctx.status, latencyMs: Math.round(latencyMs * 10) / 10, principal: state.principal?.kind ?? 'anonymous' }, 'request');
    }
  };
}
