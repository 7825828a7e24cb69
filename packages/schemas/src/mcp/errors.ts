import type { ErrorCodeTable } from '../feature-contract.ts';

/** The error codes the mcp feature raises (docs/agents.md); the root merges them into `errorCodes`. */
export const mcpErrors = {
  /** A JSON-RPC batch to an MCP endpoint at a revision without batches (every one but 2025-03-26; `mcpBatchRules`). */
  mcp_batch_not_supported: 400,
  /** A JSON-RPC batch to an MCP endpoint with more messages than `mcpBatchRules.maxMessages`; nothing in it was done. */
  mcp_batch_too_large: 400,
  /** A call of an MCP batch not run because the batch's answer reached `mcpBatchRules.answerBudgetBytes` (a member's error in a 200 answer); send it again. */
  mcp_batch_answer_full: 413,
  /** A call of an MCP batch not run because the batch was past `mcpBatchRules.timeBudgetMs` when its turn came; send it again. */
  mcp_batch_time_spent: 408,
} as const satisfies ErrorCodeTable;
