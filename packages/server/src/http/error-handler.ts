import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import type { ErrorBody } from '@svc/schemas';
import { isServiceError, ServiceError } from './service-error.ts';
import type { RequestState } from './request-state.ts';

const RETRYABLE_STATUSES = new Set([408, 429, 502, 503, 504]);

/** The error body for anything thrown: a ServiceError speaks for itself, anything else is a 500. */
export function errorBodyFor(error: unknown, requestId: string, log: Logger): ErrorBody & { status: number; headers: Record<string, string> } {
  if (isServiceError(error)) {
    return {
      status: error.status,
      headers: error.headers,
      error: error.message,
      code: error.code,
      request_id: requestId,
      ...(error.detail ? { detail: error.detail } : {}),
      ...(error.retryAfterSeconds !== undefined ? { retry_after_seconds: Math.ceil(error.retryAfterSeconds) } : {}),
      ...(error.retryable !== undefined ? { retryable: error.retryable } : {}),
    };
  }
  log.error({ err: error }, 'unhandled error');
  return { status: 500, headers: {}, error: 'Internal server error.', code: 'internal_error', request_id: requestId };
}

/** Turns every thrown error into the contract's error body; nothing internal leaves. */
export function errorHandler() {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (error) {
      const state = ctx.state as RequestState;
      const { status, headers, ...body } = errorBodyFor(error, state.requestId, state.log);
      if (state.route?.errorEnvelope === 'bayrun' && body.retryable === undefined) body.retryable = RETRYABLE_STATUSES.has(status);
      if (ctx.headerSent) {
        ctx.res.destroy();
        return;
      }
      for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
      ctx.status = status;
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(body);
    }
  };
}

/** Unknown path: JSON 404. Known path, other method: JSON 405 with `Allow`. */
export function notFoundFallback(allowedMethods: (path: string) => string[]) {
  return async function answerUnmatched(ctx: Context, next: Next): Promise<void> {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined || (ctx.state as RequestState).routeId) return;
    const allowed = allowedMethods(ctx.path);
    if (allowed.length > 0) {
      throw new ServiceError('method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; use ${allowed.join(', ')}.`, { headers: { allow: allowed.join(', ') } });
    }
    throw new ServiceError('route_not_found', `No route for ${ctx.method} ${ctx.path}. See /openapi.json for every route.`);
  };
}
