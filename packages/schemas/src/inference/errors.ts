import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes the inference feature raises (docs/inference.md); the root merges them into `errorCodes`. */
export const inferenceErrors = {
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
  /** /v1/eval: the request's ROUGE-L work (sum of longer x ceil(shorter / 32) tokens per item) is over its budget. */
  eval_work_too_large: 422,
} as const satisfies ErrorCodeTable;
