import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes the requests feature raises (docs/requests.md); the root merges them into `errorCodes`. */
export const requestsErrors = {
  request_not_found: 404,
  request_artifact_unknown: 422,
  request_credential_refused: 422,
  request_duplicate_target_invalid: 422,
  request_transition_refused: 409,
  request_has_duplicates: 409,
  request_rate_limited: 429,
} as const satisfies ErrorCodeTable;
