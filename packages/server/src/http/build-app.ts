import Koa, { type Context } from 'koa';
import type { Logger } from 'pino';
import type { Surface } from '@svc/schemas';
import type { HttpMetrics } from '../observability/metrics.ts';
import { writeError } from './error-handler.ts';
import { compileContract, serveRoute, type MountOptions } from './mount-contract.ts';
import { requestIdFrom } from './request-id.ts';
import { finishRequest } from './request-lifecycle.ts';
import { RequestState } from './request-state.ts';
import { ServiceError } from './service-error.ts';

export interface ContractAppOptions extends MountOptions {
  surfaces: readonly Surface[];
  trustProxy: boolean;
  log: Logger;
  metrics: HttpMetrics;
}

/**
 * A Koa app serving a contract. One middleware does the fixed order for every request: request
 * id, route match (JSON 404, or 405 with `Allow`), the contract adapter, errors as the contract's
 * error body, then latency headers, metrics and the log line. One function rather than a chain
 * of middlewares because this is the per-request hot path (bench/http-overhead).
 */
export function buildContractApp(options: ContractAppOptions): Koa {
  const app = new Koa({ proxy: options.trustProxy });
  const table = compileContract(options);
  app.use(async function serveContract(ctx: Context): Promise<void> {
    const state = new RequestState(requestIdFrom(ctx.headers['x-request-id']), options.log);
    (ctx.state as { svc: RequestState }).svc = state;
    ctx.res.setHeader('x-request-id', state.requestId);
    try {
      const match = table.match(ctx.method, ctx.path);
      if (match === undefined) throw new ServiceError('route_not_found', `No route for ${ctx.method} ${ctx.path}. See /openapi.json for every route.`);
      if ('allowed' in match) {
        throw new ServiceError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; use ${match.allowed.join(', ')}.`, { headers: { allow: match.allowed.join(', ') } });
      }
      await serveRoute(ctx, state, match.entry, match.params, options);
    } catch (error) {
      writeError(ctx, state, error);
    } finally {
      finishRequest(ctx, state, options.log, options.metrics);
    }
  });
  // Errors are answered above; what reaches here is a client that went away mid-stream.
  app.on('error', (error: Error) => options.log.debug({ err: error }, 'connection error'));
  return app;
}
