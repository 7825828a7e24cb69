import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes the blackboard feature raises (docs/blackboard.md); the root merges them into `errorCodes`. */
export const blackboardErrors = {
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
  /** This client address has SVC_BLACKBOARD_WATCH_PER_CALLER watch streams open; close one or retry after `Retry-After`. */
  blackboard_watch_caller_limit: 429,
  /** The server has SVC_BLACKBOARD_WATCH_MAX_STREAMS watch streams open; retry after `Retry-After` (another replica may have room). */
  blackboard_watch_server_full: 503,
} as const satisfies ErrorCodeTable;
