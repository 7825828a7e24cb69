import Koa from 'koa';
import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { ContractTree, Surface } from '@svc/schemas';
import type { HttpMetrics } from '../observability/metrics.ts';
import type { PrincipalResolver } from './auth.ts';
import { errorHandler, notFoundFallback } from './error-handler.ts';
import { mountContract } from './mount-contract.ts';
import { requestLifecycle } from './request-lifecycle.ts';

export interface ContractAppOptions {
  contract: ContractTree;
  /** Handlers in the contract's shape. */
  handlers: unknown;
  surfaces: readonly Surface[];
  resolvers: readonly PrincipalResolver[];
  openAccess: boolean;
  validateResponses: boolean;
  trustProxy: boolean;
  publicUrls: () => { baseUrl: string; apiUrl: string };
  log: Logger;
  metrics: HttpMetrics;
}

function allowedMethods(router: Router, path: string): string[] {
  const methods = new Set<string>();
  for (const layer of router.match(path, 'GET').path) for (const method of layer.methods) methods.add(method);
  return [...methods];
}

/**
 * A Koa app serving a contract, with the fixed middleware order: request lifecycle (id,
 * latency, log, metrics), error handler, unmatched-route fallback, contract routes.
 */
export function buildContractApp(options: ContractAppOptions): Koa {
  const app = new Koa({ proxy: options.trustProxy });
  const router = mountContract(options);
  app.use(requestLifecycle(options.log, options.metrics));
  app.use(errorHandler());
  app.use(notFoundFallback((path) => allowedMethods(router, path)));
  app.use(router.routes());
  // Errors are answered by errorHandler; what reaches here is a client that went away mid-stream.
  app.on('error', (error: Error) => options.log.debug({ err: error }, 'connection error'));
  return app;
}
