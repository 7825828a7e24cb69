import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes the identity feature raises (docs/identity.md); the root merges them into `errorCodes`. */
export const identityErrors = {
  /** OAuth endpoint errors carry the RFC code as suffix: `oauth_error:invalid_grant`. */
  oauth_error: 400,
  oauth_invalid_client: 401,
  credential_not_found: 404,
  credential_revoked: 409,
  credential_limit_reached: 409,
  /** A key with no webhook endpoint set (nor one kept from the key it was rotated from). */
  key_webhook_not_found: 404,
} as const satisfies ErrorCodeTable;
