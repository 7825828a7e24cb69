import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes the discovery feature raises (docs/agents.md); the root merges them into `errorCodes`. */
export const discoveryErrors = {
  /** A2A JSON-RPC (`POST /a2a`): the method or the task is not there; an A2A version it does not speak. */
  a2a_method_not_found: 404,
  a2a_task_not_found: 404,
  a2a_version_not_supported: 400,
  /** A2A with a credential: a skill it does not have (the message names the known ones), a task already finished, too many running. */
  a2a_unknown_skill: 400,
  a2a_task_not_cancelable: 409,
  a2a_tasks_running: 429,
} as const satisfies ErrorCodeTable;
