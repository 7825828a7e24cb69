import type { Context } from 'koa';
import { anonymousPrincipal, walkContract, type Principal, type ContractTree, type RouteDefinition, type Surface, type ValidationIssue } from '@svc/schemas';
import { authenticate, type PrincipalResolver } from './auth.ts';
import { handlerAt, type AnyHandler } from './handler-types.ts';
import { readRouteBody } from './read-body.ts';
import type { RequestContext } from './request-context.ts';
import { respond } from './respond.ts';
import { ServiceError } from './service-error.ts';
import { parsePart, validationError } from './validate.ts';
import { requestState, type RequestState } from './request-state.ts';
import { RouteTable, type RouteEntry } from './route-table.ts';
import { errorBodyFor } from './error-handler.ts';

export interface MountOptions {
  contract: ContractTree;
  handlers: unknown;
  surfaces: readonly Surface[];
  resolvers: readonly PrincipalResolver[];
  openAccess: boolean;
  validateResponses: boolean;
  /** Silence after which an SSE stream gets a keep-alive comment (SVC_SSE_KEEPALIVE_MS). */
  sseKeepAliveMs?: number;
  publicUrls: () => { baseUrl: string; apiUrl: string };
  /** Aborts when the server begins to drain (event streams end with a final event). */
  shutdownSignal?: AbortSignal;
}

/** Path params arrive URL-decoded; wildcard params arrive as segment arrays and are joined. */
function normaliseParams(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).map(([key, value]) => [key, Array.isArray(value) ? value.join('/') : value]));
}

function abortSignalFor(ctx: Context): AbortSignal {
  const controller = new AbortController();
  const abort = () => controller.abort();
  // The signal is made when a handler first reads it, possibly after the client left: its close
  // events will not come again, so a connection already gone aborts at once.
  if (ctx.req.socket.destroyed && !ctx.res.writableFinished) {
    abort();
    return controller.signal;
  }
  ctx.req.once('close', () => {
    if (!ctx.res.writableFinished) abort();
  });
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) abort();
  });
  return controller.signal;
}

const ANONYMOUS = Object.freeze({ principal: anonymousPrincipal, bearer: undefined });

/**
 * What a handler gets besides its input. A class with prototype getters so the per-request
 * object is cheap, and the abort signal and logger are only made when a handler uses them.
 */
class HandlerRequest implements RequestContext {
  readonly principal: Principal;
  readonly bearer: string | undefined;
  private readonly ctx: Context;
  private readonly state: RequestState;
  private readonly apiSurface: boolean;
  private readonly urls: () => { baseUrl: string; apiUrl: string };
  private abortSignal: AbortSignal | undefined;

  constructor(ctx: Context, state: RequestState, principal: Principal, bearer: string | undefined, apiSurface: boolean, urls: () => { baseUrl: string; apiUrl: string }) {
    this.ctx = ctx;
    this.state = state;
    this.principal = principal;
    this.bearer = bearer;
    this.apiSurface = apiSurface;
    this.urls = urls;
  }

  get requestId() {
    return this.state.requestId;
  }
  get method() {
    return this.ctx.method;
  }
  get ip() {
    return this.ctx.ip;
  }
  get signal() {
    return (this.abortSignal ??= abortSignalFor(this.ctx));
  }
  get timing() {
    return this.state.timing;
  }
  get log() {
    return this.state.log;
  }
  get publicUrl() {
    const urls = this.urls();
    return this.apiSurface ? urls.apiUrl : urls.baseUrl;
  }
  get headers() {
    return this.ctx.headers;
  }
}

export interface CompiledRoute {
  handler: AnyHandler;
}

/** Compiles the contract's routes of the given surfaces into a route table; every entry needs a handler. */
export function compileContract(options: MountOptions): RouteTable<CompiledRoute> {
  const table = new RouteTable<CompiledRoute>();
  for (const { id, route } of walkContract(options.contract)) {
    if (!options.surfaces.includes(route.surface)) continue;
    const handler = handlerAt(options.handlers, id);
    if (!handler) throw new Error(`No handler for contract entry ${id}`);
    table.add({ id, route, value: { handler } });
  }
  return table;
}

/**
 * The one generic adapter: authenticates, reads and validates the input with the contract's
 * schemas, calls the handler with typed input, and writes the typed answer. Handlers never
 * re-validate and never check auth.
 */
export async function serveRoute(ctx: Context, state: RequestState, entry: RouteEntry<CompiledRoute>, params: Record<string, unknown>, options: MountOptions): Promise<void> {
  const { route } = entry;
  state.routeId = entry.id;
  state.route = route;
  const authorization = ctx.get('authorization');
  // Most public calls carry no credential: skip the resolver walk entirely.
  const { principal, bearer } =
    route.auth.kind === 'public' && !authorization
      ? ANONYMOUS
      : await authenticate({
          requirement: route.auth,
          authorization: authorization || undefined,
          resolvers: options.resolvers,
          openAccess: options.openAccess,
          resourceMetadataUrl: () => `${options.publicUrls().baseUrl}/.well-known/oauth-protected-resource`,
        });
  state.principal = principal;
  const input = await parseInput(route, ctx, params);
  const request = new HandlerRequest(ctx, state, principal, bearer, route.surface === 'api', options.publicUrls);
  const result = await entry.value.handler(input, request);
  respond(ctx, route.responses[result.status], result, {
    validate: options.validateResponses,
    sseKeepAliveMs: options.sseKeepAliveMs,
    signal: () => request.signal,
    shutdown: options.shutdownSignal,
    onStreamError: (error) => {
      const body = errorBodyFor(error, state.requestId, state.log);
      return { code: body.code, error: body.error };
    },
  });
}

async function parseInput(route: RouteDefinition, ctx: Context, rawParams: Record<string, unknown>): Promise<Record<string, unknown>> {
  const issues: ValidationIssue[] = [];
  // Parts the route does not declare are not even read: this is the hot path of every request.
  const params = route.params ? parsePart(route.params, normaliseParams(rawParams), 'path', issues) : undefined;
  const query = route.query ? parsePart(route.query, { ...ctx.query }, 'query', issues) : undefined;
  const headers = route.headers ? parsePart(route.headers, ctx.headers, 'header', issues) : undefined;
  // Input that is already invalid is refused before the body is read.
  if (issues.length > 0) throw validationError(issues);
  // Routes with an upload deadline (PDF, documents) report their ingress as `upload_read_ms`.
  const raw = route.bodyTimeoutMs !== undefined ? await requestState(ctx).timing.measure('upload_read_ms', () => readRouteBody(route, ctx.req)) : await readRouteBody(route, ctx.req);
  const body = route.bodyEncoding === 'bytes' ? raw : parsePart(route.body, raw, 'body', issues);
  if (issues.length > 0) throw validationError(issues);
  if (route.bodyEncoding === 'bytes' && route.body && raw === undefined) {
    throw new ServiceError('validation_failed', 'Invalid request: body: the request body is empty', { detail: [{ loc: ['body'], msg: 'the request body is empty', type: 'missing' }] });
  }
  return { params, query, headers, body };
}
