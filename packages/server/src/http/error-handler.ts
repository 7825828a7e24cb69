import type { Context } from 'koa';
import type { Logger } from 'pino';
import { retryableStatusesFor, type ErrorBody, type JsonRpcError } from '@svc/schemas';
import { isServiceError } from '../service-error.ts';
import { databaseUnavailableError, isDatabaseUnavailable } from '../db/database-unavailable.ts';
import type { RequestState } from './request-state.ts';

/** The error body for anything thrown: a ServiceError speaks for itself, anything else is a 500. */
export function errorBodyFor(error: unknown, requestId: string, log: Logger): ErrorBody & { status: number; headers: Record<string, string> } {
  if (isServiceError(error)) {
    // A 422 on the base surface is an HTTPValidationError, whose `detail` is required: a refusal
    // raised by a service (an unknown model, a source not found) names the whole body.
    const detail = error.detail ?? (error.status === 422 ? [{ loc: ['body'], msg: error.message, type: error.code.split(':', 1)[0]! }] : undefined);
    return {
      status: error.status,
      headers: error.headers,
      error: error.message,
      code: error.code,
      request_id: requestId,
      ...(detail ? { detail } : {}),
      ...(error.retryAfterSeconds !== undefined ? { retry_after_seconds: Math.ceil(error.retryAfterSeconds) } : {}),
      ...(error.retryable !== undefined ? { retryable: error.retryable } : {}),
    };
  }
  if (isDatabaseUnavailable(error)) {
    // An outage, not a bug: one line per call, and the caller is told to come back.
    log.warn({ err: error }, 'database unavailable');
    return errorBodyFor(databaseUnavailableError(error), requestId, log);
  }
  log.error({ err: error }, 'unhandled error');
  return { status: 500, headers: {}, error: 'Internal server error.', code: 'internal_error', request_id: requestId };
}

/**
 * JSON-RPC codes for svc's error codes on a `jsonrpc` route. Input the adapter refuses is a 400
 * there (the JSON-RPC over HTTP convention and spec 4.9 for /a2a), not svc's 422. A 401 or 403 is
 * -32000, the server-error code both MCP SDKs' servers answer their own HTTP-level refusals with
 * (a 403 for a host or origin): the request was refused, nothing failed inside (-32603).
 */
function jsonRpcErrorFor(body: ErrorBody, status: number): { status: number; body: JsonRpcError } {
  const rpcCode =
    body.code === 'malformed_json'
      ? -32700
      : status === 422 || status === 413 || status === 415 || status === 400
        ? -32600
        : status === 401 || status === 403
          ? -32000
          : -32603;
  return {
    status: status === 422 ? 400 : status,
    body: {
      jsonrpc: '2.0',
      id: null,
      error: { code: rpcCode, message: body.error, data: { code: body.code, request_id: body.request_id, ...(body.detail ? { detail: body.detail } : {}) } },
    },
  };
}

/** Answers a thrown error with the contract's error body; nothing internal leaves. */
export function writeError(ctx: Context, state: RequestState, error: unknown): void {
  const { status: errorStatus, headers, ...body } = errorBodyFor(error, state.requestId, state.log);
  let status = errorStatus;
  let answer: unknown = body;
  if (state.route?.errorEnvelope === 'jsonrpc') ({ status, body: answer } = jsonRpcErrorFor(body, errorStatus));
  if (state.route?.errorEnvelope === 'bayrun' && body.retryable === undefined) body.retryable = retryableStatusesFor(state.route).includes(status);
  // OAuth clients parse `error` as the RFC code: give them one, the message as the description.
  if (state.route?.errorEnvelope === 'oauth' && status === 400)
    answer = { error: 'invalid_request', error_description: body.error, code: body.code, request_id: body.request_id };
  if (ctx.headerSent) {
    ctx.res.destroy();
    return;
  }
  for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
  ctx.status = status;
  ctx.res.setHeader('content-type', 'application/json; charset=utf-8');
  ctx.body = JSON.stringify(answer);
}
