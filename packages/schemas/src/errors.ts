import { z } from 'zod';
import type { ErrorCodeTable } from './feature-contract.ts';

/** One entry of a validation failure: where (`["body","value","text"]`), what, and which rule. */
export const ValidationIssue = z
  .object({
    loc: z.array(z.union([z.string(), z.number()])),
    msg: z.string(),
    type: z.string(),
  })
  .meta({ id: 'ValidationIssue' });
export type ValidationIssue = z.infer<typeof ValidationIssue>;

/**
 * The one error body of svc, on both surfaces. `error` is the human message (the api surface's
 * documented field), `code` the stable machine code, `request_id` the id echoed in `x-request-id`.
 */
export const ErrorBody = z
  .object({
    error: z.string(),
    code: z.string(),
    request_id: z.string(),
    detail: z.array(ValidationIssue).optional(),
    retryable: z.boolean().optional(),
    retry_after_seconds: z.number().int().nonnegative().optional(),
  })
  .meta({ id: 'ErrorBody' });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** 422 on the base surface: FastAPI's `detail` list, plus the common fields. */
export const HTTPValidationError = ErrorBody.extend({ detail: z.array(ValidationIssue) }).meta({ id: 'HTTPValidationError' });
export type HTTPValidationError = z.infer<typeof HTTPValidationError>;

/** Errors of the PDF upload route: always says whether a retry may help. */
export const BayRunErrorEnvelope = ErrorBody.extend({ retryable: z.boolean() }).meta({ id: 'BayRunErrorEnvelope' });
export type BayRunErrorEnvelope = z.infer<typeof BayRunErrorEnvelope>;

/**
 * The error body of a route whose errors are JSON-RPC (`errorEnvelope: 'jsonrpc'`: /a2a, /api/mcp):
 * `data.code` is svc's stable error code and `data.request_id` the request id, as on every other
 * svc error.
 */
export const JsonRpcError = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number(), z.null()]),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.looseObject({ code: z.string(), request_id: z.string() }) }),
  })
  .meta({ id: 'JsonRpcError' });
export type JsonRpcError = z.infer<typeof JsonRpcError>;

/**
 * The error codes of the platform: the edge, authentication and scopes, validation, limits, and
 * the generic statuses every feature may answer. A code only one feature raises is declared in that
 * feature's contract folder (`<feature>/errors.ts`) and merged into `errorCodes` by the root
 * (`error-codes.ts`); a code declared twice stops `@svc/schemas` from loading.
 */
export const platformErrorCodes = {
  bad_request: 400,
  malformed_json: 400,
  /** JSON nested past the edge's depth cap (`bodyRules.maxJsonDepth`). */
  json_too_deep: 422,
  /** A JSON string (key or value) holding NUL, which PostgreSQL text cannot store. */
  json_nul_character: 422,
  /** A JSON string (key or value) holding an unpaired UTF-16 surrogate (`"x\ud800y"`). */
  json_lone_surrogate: 422,
  /** The server's budget of request bodies in flight is full; retry after `Retry-After`. */
  body_budget_full: 503,
  invalid_json_rpc: 400,
  unauthorized: 401,
  invalid_token: 401,
  payment_required: 402,
  insufficient_scope: 403,
  forbidden: 403,
  developer_key_not_accepted: 403,
  principal_not_allowed: 403,
  scope_not_held: 403,
  /** `everyone=true` on a list's operator view from a caller the route does not allow (route.ts EveryoneView). */
  everyone_view_not_allowed: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  gone: 410,
  idempotency_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  rate_limited: 429,
  /** A limit of the caller's key or principal kind (docs/limits.md); the suffix names it: `key_limit_exceeded:requests_per_minute`. */
  key_limit_exceeded: 429,
  internal_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
  /** A discovery document built in a worker thread (OpenAPI, llms, x402's default tables) could not be built: the thread failed or passed its deadline; retry. */
  discovery_documents_unavailable: 503,
  /** A stream ended because the server began to drain; reconnect (another replica answers). */
  server_shutting_down: 503,
  /** Request headers past the server's cap (SVC_HTTP_MAX_HEADER_BYTES). */
  request_header_too_large: 431,
  /** A cross-origin preflight from an origin not in SVC_CORS_ORIGINS. */
  cors_origin_refused: 403,
  /** A request carrying two `Authorization` headers or two `Host` headers: which one is meant cannot be known, so neither is used. */
  duplicate_header: 400,
  /** A `Host` that names none of svc's own hosts while it listens on loopback (DNS rebinding; SVC_ALLOWED_HOSTS adds hosts). Not 421: a retry on another connection is refused alike. */
  host_not_allowed: 403,
  /** An MCP request (`/mcp`, `/api/mcp`) from a browser `Origin` that is not svc's own, a loopback one, or one in SVC_CORS_ORIGINS. */
  origin_not_allowed: 403,
  /** The server holds as many bytes of answers not yet taken by their clients as it may (SVC_HTTP_ANSWER_BUDGET_BYTES); retry after `Retry-After`. */
  answer_budget_full: 503,
  /** The database cannot be reached (down, restarting, or every connection busy past the pool's wait); nothing was done, retry after `Retry-After`. */
  database_unavailable: 503,
  gateway_timeout: 504,
  /** The first request with this Idempotency-Key is still being handled; retry after `Retry-After`. */
  idempotency_in_progress: 409,
} as const satisfies ErrorCodeTable;
