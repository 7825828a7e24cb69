import Koa, { type Context } from 'koa';
import type { Logger } from 'pino';
import type { Surface } from '@svc/schemas';
import type { HttpMetrics } from '../observability/metrics.ts';
import { answerPreflight, applyCors, corsPolicyFrom, type CorsPolicy } from './cors.ts';
import { holdAnswer, type AnswerBudget } from './answer-budget.ts';
import { isMcpPath, refuseDuplicateHeaders, refuseForeignHost, refuseForeignMcpOrigin, type HostPolicy } from './edge-checks.ts';
import { writeError } from './error-handler.ts';
import { compileContract, serveRoute, withBodyDefaults, type MountOptions } from './mount-contract.ts';
import { requestIdFrom } from './request-id.ts';
import type { StartStream } from './respond.ts';
import { lingerOnUnreadBody } from './linger.ts';
import { finishRequest } from './request-lifecycle.ts';
import { RequestState } from './request-state.ts';
import { traceRequest } from './request-trace.ts';
import { tracingOn } from '../observability/tracing.ts';
import { ServiceError } from '../service-error.ts';

export interface ContractAppOptions extends MountOptions {
  surfaces: readonly Surface[];
  trustProxy: boolean;
  log: Logger;
  metrics: HttpMetrics;
  /** Default: no origin listed (discovery documents stay open to all). */
  cors?: CorsPolicy;
  /** True once the server drains: answers ask the client to close its connection. */
  draining?: () => boolean;
  /** Answers some paths ahead of the contract (the web console's files), passing the rest on. */
  before?: Koa.Middleware;
  /** The hosts answered (DNS rebinding); default: any. */
  hosts?: HostPolicy;
  /** Bytes of large answers not yet taken by their clients (SVC_HTTP_ANSWER_BUDGET_BYTES); default: not counted. */
  answerBudget?: AnswerBudget;
}

/** Each app's contract middleware, for the in-process dispatch (dispatch.ts): the very function every HTTP request of the app runs. */
const contractMiddlewares = new WeakMap<Koa, (ctx: Context) => Promise<void>>();

/** The contract middleware of an app built by buildContractApp. */
export function contractMiddlewareOf(app: Koa): ((ctx: Context) => Promise<void>) | undefined {
  return contractMiddlewares.get(app);
}

/**
 * A Koa app serving a contract. One middleware does the fixed order for every request: request
 * id, route match (JSON 404, or 405 with `Allow`), the contract adapter, errors as the contract's
 * error body, then latency headers, metrics and the log line. One function rather than a chain
 * of middlewares because this is the per-request hot path (bench/http-overhead).
 */
export function buildContractApp(appOptions: ContractAppOptions): Koa {
  const options = { ...appOptions, ...withBodyDefaults(appOptions) };
  // Behind a proxy, the client's address is the one the nearest proxy appended to X-Forwarded-For
  // (the header's last entry): the entries before it are whatever the caller sent, so a caller
  // could otherwise choose the address its per-client budgets count under.
  const app = new Koa({ proxy: options.trustProxy, maxIpsCount: 1 });
  const table = compileContract(options);
  const cors = options.cors ?? corsPolicyFrom([]);
  const draining = options.draining ?? (() => false);
  const hosts = options.hosts?.enforced ? options.hosts : undefined;
  const { before } = options;
  // A refused host skips the console too, and gets its 403 from the contract's error path below.
  if (before) app.use(hosts ? (ctx, next) => (hosts.allows(ctx.req.headers.host) ? before(ctx, next) : next()) : before);
  if (tracingOn()) app.use(traceRequest);
  const serveContract = async function serveContract(ctx: Context): Promise<void> {
    // Node's request and response directly: Koa's delegating getters cost on every request.
    const { req, res } = ctx;
    const { headers } = req;
    const state = new RequestState(requestIdFrom(headers['x-request-id']), options.log);
    (ctx.state as { svc: RequestState }).svc = state;
    res.setHeader('x-request-id', state.requestId);
    // Every answer: never sniff a type other than the declared one.
    res.setHeader('x-content-type-options', 'nosniff');
    const { origin } = headers;
    /** An event stream's writer, started once the headers below are final. */
    let startStream: StartStream | undefined;
    try {
      refuseDuplicateHeaders(req);
      if (hosts) refuseForeignHost(hosts, headers.host);
      const method = req.method!;
      const path = ctx.path;
      const preflightMethod = origin && method === 'OPTIONS' ? ctx.get('access-control-request-method').toUpperCase() : '';
      const match = table.match(preflightMethod || method, path);
      if (origin) applyCors(ctx, cors, origin, match && 'entry' in match ? match.entry.route : undefined);
      if (origin && match && 'entry' in match && isMcpPath(path)) {
        // Answered in the route's envelope (a JSON-RPC error without an id, as the MCP transport allows).
        state.route = match.entry.route;
        refuseForeignMcpOrigin(origin, cors, options.publicUrls);
      }
      if (match === undefined) throw new ServiceError('route_not_found', `No route for ${method} ${path}. See /openapi.json for every route.`);
      if ('allowed' in match) {
        throw new ServiceError('method_not_allowed', `${method} is not allowed on ${path}; use ${match.allowed.join(', ')}.`, {
          headers: { allow: match.allowed.join(', ') },
        });
      }
      if (preflightMethod) answerPreflight(ctx, cors, origin!, match.entry.route, table.methodsFor(path));
      else startStream = await serveRoute(ctx, state, match.entry, match.params, options);
      if (options.answerBudget && !startStream) holdAnswer(ctx, options.answerBudget);
    } catch (error) {
      writeError(ctx, state, error);
    } finally {
      if (!res.headersSent) {
        // An answer to a credential is personal (and may carry a secret): no cache may keep it.
        if (headers.authorization && !res.getHeader('cache-control')) res.setHeader('cache-control', 'no-store');
        if (draining()) res.setHeader('connection', 'close');
      }
      finishRequest(ctx, state, options.log, options.metrics);
      lingerOnUnreadBody(req);
    }
    startStream?.();
  };
  app.use(serveContract);
  contractMiddlewares.set(app, serveContract);
  // Errors are answered above; what reaches here is a client that went away mid-stream.
  app.on('error', (error: Error) => options.log.debug({ err: error }, 'connection error'));
  return app;
}
