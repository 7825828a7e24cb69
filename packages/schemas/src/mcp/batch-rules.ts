/**
 * JSON-RPC batches on the MCP endpoints (`/mcp`, `/api/mcp`). MCP 2025-03-26 added batches and
 * 2025-06-18 removed them; 2025-11-25 and 2026-07-28 have none. A request without an
 * `MCP-Protocol-Version` header is read as 2025-03-26 (the transport specification's rule), so
 * it may batch. Where a batch is taken, it is bounded as a whole before its first message runs.
 * `/a2a` takes no batch at all: A2A's JSON-RPC binding carries one request object per POST.
 */
export const mcpBatchRules = {
  /** The one revision whose JSON-RPC layer has batches; any other answers a batch 400 -32600 `mcp_batch_not_supported`. */
  revisionWithBatches: '2025-03-26',
  /**
   * Messages in one batch, notifications included; more is 400 -32600 `mcp_batch_too_large`,
   * before any of them is read further (a cancellation recorded, a tool found, a call run).
   */
  maxMessages: 16,
  /**
   * Bytes of the batch's answer. Its calls run one after another, in order, each as the REST
   * request it stands for (its route's auth, scopes, key limits, body cap). A call starts only
   * while the answers so far are under this budget; past it, each later call is not run and is
   * answered with the JSON-RPC error -32000 whose `data.code` is `mcp_batch_answer_full`, safe
   * to send again on its own. A call that ran keeps its answer whole (a write's result is never
   * dropped), so an answer is at most this budget plus one call's answer, which its REST route
   * bounds. With 16 messages and 512 KiB, a batch costs under ten of its REST twins (issue 40's
   * target; 32 and 4 MiB let one cost 9 to 15, and 2 MiB up to 9.7 on a loaded machine,
   * `stall-multiplexers.test.ts`). 1 MiB held until tools/list shrank to about 62 KB (issue 43):
   * then 16 lists fit in it, 15.3 times one list's answer; at 512 KiB a batch of lists stops after
   * 9 of them. A batch answers at most about budget / twin + 1 of its twins, so a twin's answer
   * under 57 KB (this budget's ninth) would need the budget lowered again.
   */
  answerBudgetBytes: 524_288,
  /**
   * Milliseconds from the batch's arrival: a call starts only within them; past them, each later
   * call is not run and is answered -32000 `mcp_batch_time_spent`, safe to send again. A call
   * already running is not cut short (its route's own deadline bounds it), so a batch takes at
   * most this plus one call's time.
   */
  timeBudgetMs: 60_000,
} as const;

/** The JSON-RPC code of a batch's call that was not run because the batch's answer or time budget was spent. */
export const MCP_BATCH_NOT_RUN_RPC_CODE = -32000;

/** The batch rules in one sentence, for the MCP endpoints' contract descriptions (and so the OpenAPI document). */
export const mcpBatchDescription =
  `JSON-RPC batches only at ${mcpBatchRules.revisionWithBatches} (also a request without MCP-Protocol-Version); at any other revision a batch is 400 -32600 \`mcp_batch_not_supported\`. ` +
  `A batch holds at most ${mcpBatchRules.maxMessages} messages (more: 400 -32600 \`mcp_batch_too_large\`, nothing done); its calls run one after another, each as the REST request it stands for (auth, scopes, key limits, body cap), ` +
  `and a call starts only while the answer so far is under ${mcpBatchRules.answerBudgetBytes} bytes and within ${mcpBatchRules.timeBudgetMs} ms of the batch's arrival; ` +
  'a later call is not run and is answered -32000 `mcp_batch_answer_full` or `mcp_batch_time_spent` (send it again).';
