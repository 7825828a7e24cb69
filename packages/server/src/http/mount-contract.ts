import Router from '@koa/router';
import type { Context } from 'koa';
import { walkContract, type ContractTree, type RouteDefinition, type Surface, type ValidationIssue } from '@svc/schemas';
import { authenticate, type PrincipalResolver } from './auth.ts';
import { handlerAt } from './handler-types.ts';
import { readRouteBody } from './read-body.ts';
import type { RequestContext } from './request-context.ts';
import { respond } from './respond.ts';
import { ServiceError } from './service-error.ts';
import { parsePart, validationError } from './validate.ts';
import type { RequestState } from './request-state.ts';
import { errorBodyFor } from './error-handler.ts';

export interface MountOptions {
  contract: ContractTree;
  handlers: unknown;
  surfaces: readonly Surface[];
  resolvers: readonly PrincipalResolver[];
  openAccess: boolean;
  validateResponses: boolean;
  publicUrls: () => { baseUrl: string; apiUrl: string };
}

/** Path params arrive URL-decoded by the router; wildcard params arrive as segment arrays. */
function normaliseParams(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).map(([key, value]) => [key, Array.isArray(value) ? value.join('/') : value]));
}

function abortSignalFor(ctx: Context): AbortSignal {
  const controller = new AbortController();
  const abort = () => controller.abort();
  ctx.req.once('close', () => {
    if (!ctx.res.writableFinished) abort();
  });
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) abort();
  });
  return controller.signal;
}

/**
 * The one generic adapter: for each contract entry, a route that authenticates, reads and
 * validates the input with the contract's schemas, calls the handler with typed input, and
 * writes the typed answer. Handlers never re-validate and never check auth.
 */
export function mountContract(options: MountOptions): Router {
  const router = new Router({ exclusive: 'specificity' });
  for (const { id, route } of walkContract(options.contract)) {
    if (!options.surfaces.includes(route.surface)) continue;
    const handler = handlerAt(options.handlers, id);
    if (!handler) throw new Error(`No handler for contract entry ${id}`);
    router.register(route.path, [route.method], async (ctx: Context) => {
      const state = ctx.state as RequestState;
      state.routeId = id;
      state.route = route;
      const urls = options.publicUrls();
      const { principal, bearer } = await authenticate({
        requirement: route.auth,
        authorization: ctx.get('authorization') || undefined,
        resolvers: options.resolvers,
        openAccess: options.openAccess,
        resourceMetadataUrl: `${urls.baseUrl}/.well-known/oauth-protected-resource`,
      });
      state.principal = principal;
      const input = await parseInput(route, ctx);
      const signal = abortSignalFor(ctx);
      const request: RequestContext = {
        requestId: state.requestId,
        ip: ctx.ip,
        principal,
        bearer,
        signal,
        timing: state.timing,
        log: state.log,
        publicUrl: route.surface === 'api' ? urls.apiUrl : urls.baseUrl,
        headers: ctx.headers,
      };
      const result = await handler(input, request);
      respond(ctx, route.responses[result.status], result, {
        validate: options.validateResponses,
        signal,
        onStreamError: (error) => {
          const body = errorBodyFor(error, state.requestId, state.log);
          return { code: body.code, error: body.error };
        },
      });
    });
  }
  return router;
}

async function parseInput(route: RouteDefinition, ctx: Context): Promise<Record<string, unknown>> {
  const issues: ValidationIssue[] = [];
  const params = parsePart(route.params, normaliseParams(ctx.params ?? {}), 'path', issues);
  const query = parsePart(route.query, { ...ctx.query }, 'query', issues);
  const headers = parsePart(route.headers, ctx.headers, 'header', issues);
  // Input that is already invalid is refused before the body is read.
  if (issues.length > 0) throw validationError(issues);
  // Routes with an upload deadline (PDF, documents) report their ingress as `upload_read_ms`.
  const raw = route.bodyTimeoutMs !== undefined ? await (ctx.state as RequestState).timing.measure('upload_read_ms', () => readRouteBody(route, ctx.req)) : await readRouteBody(route, ctx.req);
  const body = route.bodyEncoding === 'bytes' ? raw : parsePart(route.body, raw, 'body', issues);
  if (issues.length > 0) throw validationError(issues);
  if (route.bodyEncoding === 'bytes' && route.body && raw === undefined) {
    throw new ServiceError('validation_failed', 'Invalid request: body: the request body is empty', { detail: [{ loc: ['body'], msg: 'the request body is empty', type: 'missing' }] });
  }
  return { params, query, headers, body };
}
