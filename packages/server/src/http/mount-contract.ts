import type { Context } from 'koa';
import {
  anonymousPrincipal,
  oauthContract,
  tokenReservation,
  urlFor,
  walkContract,
  type Principal,
  type ContractTree,
  type RouteDefinition,
  type Surface,
  type ValidationIssue,
} from '@svc/schemas';
import { authenticate, carriedPrincipal, type PrincipalResolver } from './auth.ts';
import { BodyBudget } from './body-budget.ts';
import type { KeyLimiter } from './key-limits.ts';
import { handlerAt, type AdmitStep, type AnyHandler } from './handler-types.ts';
import { bodyBytesToHold, bodyPlanFor, readRouteBody, type BodyPlan } from './read-body.ts';
import { boundsOutput } from './token-estimate.ts';
import type { RequestContext } from './request-context.ts';
import { everyoneAsked, type RowScope } from './everyone-view.ts';
import { jsonStatusesOf, respond, writeJson, type StartStream } from './respond.ts';
import { ServiceError } from '../service-error.ts';
import { parsePart, validationError } from './validate.ts';
import type { RequestState } from './request-state.ts';
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
  /** Bytes of bodies in flight, shared by every surface of the server (SVC_HTTP_BODY_BUDGET_BYTES); default: one of 256 MiB per app. */
  bodyBudget?: BodyBudget;
  /** Deadline of a whole body on routes that name none (SVC_HTTP_BODY_TIMEOUT_MS); default 30 s. */
  bodyTimeoutMs?: number;
  /** Limits per key and principal kind, enforced on every scoped route (docs/limits.md). */
  keyLimits?: KeyLimiter;
}

/** Mount options with the body defences filled in. */
export type ServeOptions = MountOptions & Required<Pick<MountOptions, 'bodyBudget' | 'bodyTimeoutMs'>>;

export function withBodyDefaults(options: MountOptions): ServeOptions {
  return { ...options, bodyBudget: options.bodyBudget ?? new BodyBudget(256 * 1024 * 1024), bodyTimeoutMs: options.bodyTimeoutMs ?? 30_000 };
}

/** Path params arrive URL-decoded; wildcard params arrive as segment arrays and are joined. */
function normaliseParams(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).map(([key, value]) => [key, Array.isArray(value) ? value.join('/') : value]));
}

/** The controller behind a request's signal: the client leaving aborts it, and so may svc (HandlerRequest.abort). */
function abortControllerFor(ctx: Context): AbortController {
  const controller = new AbortController();
  // 'finish' as well as writableFinished: an in-process request (http/dispatch.ts) has no real
  // socket, so its answer never reads as written out, and its close would abort every call that
  // already answered (an AbortError made, stack and all, per call).
  let answered = false;
  const abort = () => {
    if (!answered && !ctx.res.writableFinished) controller.abort();
  };
  // The signal is made when a handler first reads it, possibly after the client left: its close
  // events will not come again, so a connection already gone aborts at once.
  if (ctx.req.socket.destroyed) {
    abort();
    return controller;
  }
  ctx.res.once('finish', () => {
    answered = true;
  });
  ctx.req.once('close', abort);
  ctx.res.once('close', abort);
  return controller;
}

const ANONYMOUS = Object.freeze({ principal: anonymousPrincipal, bearer: undefined });
/** The row scope of an operator view asked for and allowed. */
const EVERYONE: RowScope = Object.freeze({ everyone: true });

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
  private readonly everyone: boolean;
  private abortController: AbortController | undefined;

  constructor(
    ctx: Context,
    state: RequestState,
    principal: Principal,
    bearer: string | undefined,
    apiSurface: boolean,
    urls: () => { baseUrl: string; apiUrl: string },
    everyone: boolean,
  ) {
    this.ctx = ctx;
    this.everyone = everyone;
    this.state = state;
    this.principal = principal;
    this.bearer = bearer;
    this.apiSurface = apiSurface;
    this.urls = urls;
  }

  get requestId() {
    return this.state.requestId;
  }
  get rows(): RowScope {
    return this.everyone ? EVERYONE : { everyone: false, principal: this.principal };
  }
  get method() {
    return this.ctx.method;
  }
  get ip() {
    return this.ctx.ip;
  }
  get signal() {
    return (this.abortController ??= abortControllerFor(this.ctx)).signal;
  }
  /** See outliveRequest. */
  outlive(work: Promise<unknown>) {
    (this.state.outliving ??= []).push(work);
  }
  /** See abortRequest. */
  abort(reason: Error) {
    (this.abortController ??= abortControllerFor(this.ctx)).abort(reason);
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

/**
 * Aborts a request's signal with `reason`, as if its client had left: a request cancelled by its
 * protocol (an MCP `notifications/cancelled` naming it) stops its work without a second signal
 * for the work to follow. Only a request this adapter serves can be aborted.
 */
export function abortRequest(request: RequestContext, reason: Error): void {
  if (!(request instanceof HandlerRequest)) throw new Error('abortRequest: the request is not one the contract adapter serves');
  request.abort(reason);
}

/**
 * Marks `work` as started by this request and outliving its answer (a background response): the
 * request's key-limit holds (the concurrency lease, token reservations) are kept until it settles,
 * so a caller cannot pass its concurrency or token limit by asking for work in the background.
 * A context this adapter does not serve (a job item's) holds no key-limit lease: nothing to keep.
 */
export function outliveRequest(request: RequestContext, work: Promise<unknown>): void {
  if (request instanceof HandlerRequest) request.outlive(work);
}

/**
 * What serving a route needs, worked out once when the contract is mounted: every request of
 * the route then reads these instead of asking the route definition again.
 */
export interface CompiledRoute {
  handler: AnyHandler;
  /** Public routes serve a request without a credential as anonymous, skipping the resolvers. */
  publicAuth: boolean;
  apiSurface: boolean;
  /** Undefined when the route takes no body. */
  body: BodyPlan | undefined;
  /** The handler's admission, decided before the body is read. */
  admit: AdmitStep | undefined;
  /** Statuses answered with a JSON schema: written without looking at the spec. */
  jsonStatuses: ReadonlySet<number>;
  /** Scoped routes are held to the caller's limits. */
  limited: boolean;
  /**
   * Inference routes with a JSON body reserve their estimate of tokens once the body is read
   * (docs/limits.md): undefined on other routes, else the output a call that names no bound reserves.
   */
  tokenDefaultOutput: number | undefined;
}

/** Compiles the contract's routes of the given surfaces into a route table; every entry needs a handler. */
export function compileContract(options: MountOptions): RouteTable<CompiledRoute> {
  const table = new RouteTable<CompiledRoute>();
  for (const { id, route } of walkContract(options.contract)) {
    if (!options.surfaces.includes(route.surface)) continue;
    const handler = handlerAt(options.handlers, id);
    if (!handler) throw new Error(`No handler for contract entry ${id}`);
    const value: CompiledRoute = {
      handler,
      publicAuth: route.auth.kind === 'public',
      apiSurface: route.surface === 'api',
      body: bodyPlanFor(route),
      admit: handler.admit,
      jsonStatuses: jsonStatusesOf(route.responses),
      limited: route.auth.kind === 'scoped',
      tokenDefaultOutput:
        route.auth.kind === 'scoped' && route.auth.scopes.includes('inference:invoke') && route.body !== undefined && route.bodyEncoding !== 'bytes'
          ? boundsOutput(route.body)
            ? tokenReservation.defaultOutputTokens
            : 0
          : undefined,
    };
    table.add({ id, route, value });
  }
  return table;
}

/**
 * The one generic adapter: authenticates, reads and validates the input with the contract's
 * schemas, calls the handler with typed input, and writes the typed answer. Handlers never
 * re-validate and never check auth. The request path of every route: one async function,
 * awaiting only what is really asynchronous (a credential, the body, the handler).
 */
export async function serveRoute(
  ctx: Context,
  state: RequestState,
  entry: RouteEntry<CompiledRoute>,
  params: Record<string, unknown>,
  options: ServeOptions,
): Promise<StartStream | undefined> {
  const { route, value: compiled } = entry;
  state.routeId = entry.id;
  state.route = route;
  const authorization = ctx.req.headers.authorization;
  // Most public calls carry no credential: skip the resolver walk entirely.
  const { principal, bearer } =
    compiled.publicAuth && !authorization
      ? ANONYMOUS
      : await authenticate({
          requirement: route.auth,
          authorization: authorization || undefined,
          resolvers: options.resolvers,
          openAccess: options.openAccess,
          resourceMetadataUrl: () => urlFor(options.publicUrls(), oauthContract.protectedResource),
          countRequest: compiled.limited && options.keyLimits !== undefined && ctx.req.headers['idempotency-key'] === undefined,
          // An in-process call (an MCP tool call) whose outer request resolved this credential already.
          resolved: carriedPrincipal(ctx.req),
        });
  state.principal = principal;
  const input = parseHeadParts(route, ctx, params);
  // An operator view asked for by a caller it does not allow is refused here, as a missing scope is.
  const everyone = route.everyone !== undefined && everyoneAsked(route.everyone, input.query, principal);
  const request = new HandlerRequest(ctx, state, principal, bearer, compiled.apiSurface, options.publicUrls, everyone);
  const plan = compiled.body;
  // Everything that may refuse the request is decided before its body is read: framing (415,
  // 413 from Content-Length), the caller's limits, the route's admission (a full queue, a rate limit), then the
  // server's budget of bodies in flight. Places held are given back when the request ends.
  const bytesToHold = plan ? bodyBytesToHold(plan, ctx.req) : 0;
  if (compiled.limited && options.keyLimits?.applies(principal)) {
    // No promise when a busy key's limits were decided from memory: nothing to wait for.
    const enforcing = options.keyLimits.enforce(ctx, principal);
    if (enforcing) await enforcing;
  }
  if (compiled.admit) releaseOnEnd(ctx, await compiled.admit(request));
  if (bytesToHold > 0) releaseOnEnd(ctx, options.bodyBudget.hold(bytesToHold, ctx.ip));
  if (plan) {
    // Input that is already invalid was refused above, before the body is read; no body sent
    // reads as undefined, and the schema decides. Routes with an upload deadline (PDF, documents)
    // report their ingress as `upload_read_ms`.
    const raw =
      bytesToHold === 0
        ? undefined
        : plan.timeoutMs !== undefined
          ? await state.timing.measure('upload_read_ms', () => readRouteBody(plan, ctx.req, options.bodyTimeoutMs))
          : await readRouteBody(plan, ctx.req, options.bodyTimeoutMs);
    input.body = parseBody(route, raw);
    // The call's token estimate needs its body (max_tokens, its length): reserved before any work.
    if (compiled.tokenDefaultOutput !== undefined && options.keyLimits?.applies(principal))
      await options.keyLimits.reserveTokens(ctx, principal, input.body, bytesToHold, compiled.tokenDefaultOutput);
  }
  const result = await compiled.handler(input, request);
  if (!options.validateResponses && compiled.jsonStatuses.has(result.status)) {
    writeJson(ctx, result);
    return undefined;
  }
  return respond(ctx, route.responses[result.status], result, {
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

type Input = { params: unknown; query: unknown; headers: unknown; body: unknown };

/** Gives a held place back once the response is over, answered or cut off. */
function releaseOnEnd(ctx: Context, release: (() => void) | void): void {
  if (!release) return;
  if (ctx.res.closed) release();
  else ctx.res.once('close', release);
}

/** Path, query and headers: parts the route does not declare are not even read (the hot path of every request). */
function parseHeadParts(route: RouteDefinition, ctx: Context, rawParams: Record<string, unknown>): Input {
  if (!route.params && !route.query && !route.headers) return { params: undefined, query: undefined, headers: undefined, body: undefined };
  const issues: ValidationIssue[] = [];
  const params = route.params ? parsePart(route.params, normaliseParams(rawParams), 'path', issues) : undefined;
  const query = route.query ? parsePart(route.query, { ...ctx.query }, 'query', issues) : undefined;
  const headers = route.headers ? parsePart(route.headers, ctx.req.headers, 'header', issues) : undefined;
  if (issues.length > 0) throw validationError(issues);
  return { params, query, headers, body: undefined };
}

/** The decoded body against the route's schema; a bytes route only needs some bytes. */
function parseBody(route: RouteDefinition, raw: unknown): unknown {
  if (route.bodyEncoding === 'bytes') {
    if (raw === undefined) {
      throw new ServiceError('validation_failed', 'Invalid request: body: the request body is empty', {
        detail: [{ loc: ['body'], msg: 'the request body is empty', type: 'missing' }],
      });
    }
    return raw;
  }
  const issues: ValidationIssue[] = [];
  const body = parsePart(route.body, raw, 'body', issues);
  if (issues.length > 0) throw validationError(issues);
  return body;
}
