import { ProtocolError } from '@modelcontextprotocol/server';
import { MCP_BATCH_NOT_RUN_RPC_CODE, mcpBatchRules } from '@svc/schemas';

/**
 * A call of a batch not run because the batch spent its answer or time budget: the JSON-RPC error
 * -32000 whose `data.code` says which (a tool that answers errors as results says it as one).
 * Nothing was done for it, so sending it again is safe.
 */
export class BatchCallNotRun extends ProtocolError {
  readonly svcCode: 'mcp_batch_answer_full' | 'mcp_batch_time_spent';

  constructor(svcCode: BatchCallNotRun['svcCode'], message: string, data: Record<string, number>) {
    super(MCP_BATCH_NOT_RUN_RPC_CODE, message, { code: svcCode, ...data, retryable: true });
    this.svcCode = svcCode;
  }
}

/** The budgets of one batch (`mcpBatchRules`); a test may shorten the time budget (TestSeams.mcpBatchTimeBudgetMs). */
export interface BatchBudgets {
  readonly answerBytes: number;
  readonly timeMs: number;
}

/**
 * The calls of one JSON-RPC batch (an MCP endpoint at 2025-03-26), bounded as a whole
 * (`mcpBatchRules`). The SDK hands every message of a batch to its handler at once, so 100 reads
 * of a large channel would all hold their answers together (1.4 GiB for one 10 KB request); through
 * the gate they run one after another, in the order they arrive, and a call starts only while the
 * answers so far are under the answer budget and the batch is within its time budget. A call past
 * either is not run: its error says so, and sending it again is safe. A call that ran keeps its
 * answer whole and is not cut short, so a write's result always reaches the caller; the answer is
 * at most the budget plus one call's answer, the time at most the budget plus one call's.
 *
 * @example
 *   const gate = Array.isArray(body) ? new McpBatchGate() : undefined;
 *   server.setRequestHandler('tools/list', () => (gate ? gate.run(list) : list()));
 */
export class McpBatchGate {
  readonly #budgets: BatchBudgets;
  readonly #arrivedAt = performance.now();
  #answeredBytes = 0;
  #previous: Promise<unknown> = Promise.resolve();

  constructor(budgets: BatchBudgets = { answerBytes: mcpBatchRules.answerBudgetBytes, timeMs: mcpBatchRules.timeBudgetMs }) {
    this.#budgets = budgets;
  }

  /** Runs one call's work after the calls before it, and counts its answer; refuses to start it once a budget is spent. */
  run<T>(work: () => T | Promise<T>): Promise<T> {
    const turn = this.#previous.then(async () => {
      const { answerBytes, timeMs } = this.#budgets;
      if (this.#answeredBytes >= answerBytes)
        throw new BatchCallNotRun(
          'mcp_batch_answer_full',
          `Not run: this batch's answer reached its budget of ${answerBytes} bytes before this call; send it again, alone or in a later batch.`,
          { answer_budget_bytes: answerBytes },
        );
      if (performance.now() - this.#arrivedAt >= timeMs)
        throw new BatchCallNotRun(
          'mcp_batch_time_spent',
          `Not run: this batch had run for its ${timeMs} ms before this call's turn; send it again, alone or in a later batch.`,
          { time_budget_ms: timeMs },
        );
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
export function batchGateFor(body: unknown, timeBudgetMs: number = mcpBatchRules.timeBudgetMs): McpBatchGate | undefined {
  return Array.isArray(body) ? new McpBatchGate({ answerBytes: mcpBatchRules.answerBudgetBytes, timeMs: timeBudgetMs }) : undefined;
}
