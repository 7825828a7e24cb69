import { z } from 'zod';

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
 * Stable error codes and their HTTP status. A code may carry a suffix after a colon
 * (`blackboard_field_conflict:task`); the status comes from the part before it.
 * Features add their codes here so the table stays the single source.
 */
export const errorCodes = {
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
  blackboard_field_conflict: 400,
  blackboard_cursor_conflict: 400,
  blackboard_filter_conflict: 400,
  blackboard_key_required: 400,
  blackboard_edit_token_invalid: 403,
  blackboard_item_not_found: 404,
  blackboard_idempotency_conflict: 409,
  blackboard_value_too_large: 413,
  blackboard_nul_character: 422,
  blackboard_admission: 429,
  blackboard_posting_paused: 503,
  invalid_json_rpc: 400,
  /** A JSON-RPC batch to an MCP endpoint at a revision without batches (every one but 2025-03-26; `mcpBatchRules`). */
  mcp_batch_not_supported: 400,
  /** A JSON-RPC batch to an MCP endpoint with more messages than `mcpBatchRules.maxMessages`; nothing in it was done. */
  mcp_batch_too_large: 400,
  /** A call of an MCP batch not run because the batch's answer reached `mcpBatchRules.answerBudgetBytes` (a member's error in a 200 answer); send it again. */
  mcp_batch_answer_full: 413,
  /** A call of an MCP batch not run because the batch was past `mcpBatchRules.timeBudgetMs` when its turn came; send it again. */
  mcp_batch_time_spent: 408,
  /** A2A JSON-RPC (`POST /a2a`): the method or the task is not there; an A2A version it does not speak. */
  a2a_method_not_found: 404,
  a2a_task_not_found: 404,
  a2a_version_not_supported: 400,
  /** A2A with a credential: a skill it does not have (the message names the known ones), a task already finished, too many running. */
  a2a_unknown_skill: 400,
  a2a_task_not_cancelable: 409,
  a2a_tasks_running: 429,
  /** OAuth endpoint errors carry the RFC code as suffix: `oauth_error:invalid_grant`. */
  oauth_error: 400,
  oauth_invalid_client: 401,
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
  credential_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  credential_revoked: 409,
  credential_limit_reached: 409,
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
  // Catalog and verified downloads.
  invalid_path: 400,
  artifact_not_found: 404,
  file_not_found: 404,
  object_not_found: 404,
  // A `Range` on a stored object that starts at or past its end (its Content-Range gives the size).
  range_not_satisfiable: 416,
  file_not_hosted: 409,
  no_hosted_files: 409,
  signed_url_invalid: 403,
  signed_url_expired: 403,
  completion_token_invalid: 403,
  completion_token_foreign: 403,
  completion_token_spent: 409,
  completion_token_expired: 410,
  completion_digest_mismatch: 409,
  // PDF and document extraction (docs/pdf.md).
  pdf_invalid: 422,
  pdf_encrypted: 422,
  pdf_password_incorrect: 422,
  pdf_too_complex: 422,
  pdf_queue_full: 503,
  pdf_queue_timeout: 503,
  pdf_worker_unavailable: 503,
  /** A validate_json or calculate item whose worker thread did not start and load its library within 30 s (a machine under heavy load); retry the item. */
  job_worker_unavailable: 503,
  pdf_parse_timeout: 504,
  source_url_refused: 422,
  source_fetch_failed: 422,
  document_invalid: 422,
  document_format_unknown: 422,
  // Inference (docs/inference.md).
  model_not_found: 422,
  model_operation_unsupported: 422,
  /** Chat `n > 1` for a model that answers one choice (the built-in engine). */
  chat_choices_unsupported: 400,
  upstream_error: 502,
  upstream_timeout: 504,
  upstream_rejected_request: 422,
  upstream_not_configured: 503,
  /** Every deployment of the model (and its fallbacks) is cooling down after failures or at its in-flight maximum; retry after `Retry-After`. */
  upstream_unavailable: 503,
  source_not_found: 422,
  // The Responses API (docs/inference.md, "The Responses API").
  /** A stored response that is not there for this caller: unknown, another principal's, deleted, or past its retention. */
  response_not_found: 404,
  /** A hosted tool (web search, file search, computer use, code interpreter, ...) svc does not run; the message names `tools[i].type`. */
  responses_tool_unsupported: 400,
  /** A field or value the model's engine cannot express (`background: true`, chat-less fields when translated); the message names it. */
  responses_parameter_unsupported: 400,
  /** An input item or content part the model cannot take (an image for the built-in engine, a file); the message names `input[i]...`. */
  responses_input_unsupported: 400,
  /** /v1/eval: the request's ROUGE-L work (sum of longer x ceil(shorter / 32) tokens per item) is over its budget. */
  eval_work_too_large: 422,
  // Billing (docs/billing.md).
  billing_not_configured: 503,
  billing_principal_not_allowed: 403,
  credits_exhausted: 402,
  webhook_signature_invalid: 400,
  processor_error: 502,
  // Catalog requests (docs/requests.md).
  request_not_found: 404,
  request_artifact_unknown: 422,
  request_credential_refused: 422,
  request_duplicate_target_invalid: 422,
  request_transition_refused: 409,
  request_has_duplicates: 409,
  request_rate_limited: 429,
  // x402 pay-per-call (docs/billing.md).
  x402_not_configured: 503,
  x402_payment_required: 402,
  x402_payment_refused: 402,
  x402_facilitator_error: 502,
  // Batch jobs and the idempotency store (docs/jobs.md).
  /** The first request with this Idempotency-Key is still being handled; retry after `Retry-After`. */
  idempotency_in_progress: 409,
  job_not_found: 404,
  /** `job_not_cancellable:<status>`: only queued jobs can be cancelled. */
  job_not_cancellable: 409,
  /** `job_not_finished:<status>`: the result exists once the job completed or failed. */
  job_not_finished: 409,
  job_cancelled: 409,
  /** `jobs_active_limit:<which>`: principal_jobs, principal_items, global_jobs or global_items. */
  jobs_active_limit: 429,
  /** A job's error (not an HTTP answer): its results would pass max_result_bytes. */
  job_result_too_large: 413,
  /** A job's error: its runner died (lease expired) on every allowed attempt. */
  job_attempts_exhausted: 503,
  /** An item's error: the expression is not arithmetic over numbers and the allowed functions. */
  calculate_invalid: 422,
  calculate_not_finite: 422,
  /** An item's error: calculate passed its deadline or memory cap in its worker thread. */
  calculate_too_costly: 422,
  /** An item's error: the JSON Schema itself does not compile (RE2 refusing a pattern included). */
  json_schema_invalid: 422,
  /** An item's error: validate_json passed its deadline or memory cap in its worker thread. */
  json_validation_too_costly: 422,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorCodes;

export function statusForCode(code: string): number {
  const base = code.split(':', 1)[0] as ErrorCode;
  return errorCodes[base] ?? 500;
}
