import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes the catalog feature raises (docs/catalog.md); the root merges them into `errorCodes`. */
export const catalogErrors = {
  invalid_path: 400,
  artifact_not_found: 404,
  file_not_found: 404,
  object_not_found: 404,
  /** A `Range` on a stored object that starts at or past its end (its Content-Range gives the size). */
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
} as const satisfies ErrorCodeTable;
