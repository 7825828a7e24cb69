import { ProtocolError } from '@modelcontextprotocol/server';
import { MCP_BATCH_ANSWER_FULL_RPC_CODE, mcpBatchRules } from '@svc/schemas';

/**
 * A call of a batch not run because the batch's answer was full: the JSON-RPC error -32000 with
 * `data.code` `mcp_batch_answer_full` (a tool that answers errors as results says it as one).
 */
export class BatchAnswerFull extends ProtocolError {
  constructor(budgetBytes: number) {
    super(
      MCP_BATCH_ANSWER_FULL_RPC_CODE,
      `Not run: this batch's answer reached its budget of ${budgetBytes} bytes before this call; send it again, alone or in a later batch.`,
      { code: 'mcp_batch_answer_full', answer_budget_bytes: budgetBytes, retryable: true },
    );
  }
}

/**
 * The calls of one JSON-RPC batch (an MCP endpoint at 2025-03-26), bounded as a whole
 * (`mcpBatchRules`). The SDK hands every message of a batch to its handler at once, so 100 reads
 * of a large channel would all hold their answers together (1.4 GiB for one 10 KB request); through
 * the gate they run one after another, in the order they arrive, and a call starts only while the
 * answers so far are under the budget. A call past it is not run: its error says so, and sending
 * it again is safe. A call that ran keeps its answer whole, so a write's result always reaches
 * the caller; the answer is at most the budget plus one call's answer.
 *
 * @example
 *   const gate = Array.isArray(body) ? new McpBatchGate() : undefined;
 *   server.setRequestHandler('tools/list', () => (gate ? gate.run(list) : list()));
 */
export class McpBatchGate {
  readonly #budgetBytes: number;
  #answeredBytes = 0;
  #previous: Promise<unknown> = Promise.resolve();

  constructor(budgetBytes: number = mcpBatchRules.answerBudgetBytes) {
    this.#budgetBytes = budgetBytes;
  }

  /** Runs one call's work after the calls before it, and counts its answer; refuses to start it once the budget is reached. */
  run<T>(work: () => T | Promise<T>): Promise<T> {
    const turn = this.#previous.then(async () => {
      if (this.#answeredBytes >= this.#budgetBytes) throw new BatchAnswerFull(this.#budgetBytes);
      const result = await work();
      // The bytes the SDK will write for it; counted only while under the budget, so this
      // second encoding costs at most the budget plus one answer.
      this.#answeredBytes += Buffer.byteLength(JSON.stringify(result) ?? '');
      return result;
    });
    // The next call waits for this one, whether it answered or failed.
    this.#previous = turn.catch(() => {});
    return turn;
  }
}

/** The gate of a request's calls: one for a batch, none for a single message (nothing to bound beyond the call itself). */
export function batchGateFor(body: unknown): McpBatchGate | undefined {
  return Array.isArray(body) ? new McpBatchGate() : undefined;
}
