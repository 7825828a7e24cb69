import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { ErrorBody } from '@svc/schemas';
import { isServiceError } from './service-error.ts';
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

/** Answers a thrown error with the contract's error body; nothing internal leaves. */
export function writeError(ctx: Context, state: RequestState, error: unknown): void {
  const { status, headers, ...body } = errorBodyFor(error, state.requestId, state.log);
  if (state.route?.errorEnvelope === 'bayrun' && body.retryable === undefined) body.retryable = RETRYABLE_STATUSES.has(status);
  // OAuth clients parse `error` as the RFC code: give them one, the message as the description.
  const answer = state.route?.errorEnvelope === 'oauth' && status === 400 ? { error: 'invalid_request', error_description: body.error, code: body.code, request_id: body.request_id } : body;
  if (ctx.headerSent) {
    ctx.res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
  ctx.status = status;
  ctx.res.setHeader('content-type', 'application/json; charset=utf-8');
  ctx.body = JSON.stringify(answer);
}
