import { randomUUID } from 'node:crypto';
import { batchJobRequestSchemaId, finishedJobStatuses, jobsContract, type BatchJob, type BatchJobResult, type JobOperation } from '@svc/schemas';
import type { ContractDispatch, DispatchAnswer, DispatchCaller } from '../../http/dispatch.ts';

/**
 * MCP Tasks, 2025-11-25 core (`tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` and a
 * task-augmented `tools/call`), on svc's durable job queue: a task is a job of one item, and its
 * id is the job's id. So a task runs on any replica, survives `kill -9` of the replica running it
 * (the queue takes it up again, or ends it `failed` with a reason), is answered by every replica,
 * and belongs to the principal that made it. Every step is the job's REST route, called as the
 * caller (deps.dispatch): creating a task is `POST /v1/jobs` (scope jobs:write, the active-job
 * caps, the body cap, each item checked by its operation's own request schema), after the /mcp
 * endpoint checked the tool's own scopes as for any call (refuseUnauthorisedCalls). Nothing is
 * done before those checks pass.
 *
 * Which tools: those whose operation the job queue runs (a tool name to its job operation).
 * Documents extraction, RAG and chat are not job operations: they wait for the shared task store.
 */
export const TASK_TOOL_OPERATIONS: Readonly<Record<string, JobOperation>> = {
  pdf_extract: 'pdf_extract',
  inference_summarize: 'summarize',
  inference_embeddings: 'embeddings',
  inference_rerank: 'rerank',
  inference_classify: 'classify',
};

/** How often a client should poll `tasks/get` (the Task's pollInterval), and how often `tasks/result` looks while it waits. */
export const TASK_POLL_INTERVAL_MS = 500;

/** The server capability a 2025-11-25 client checks before it augments a call with a task. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;

type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface McpTask {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Milliseconds from creation the task is kept: the job's expiry when it has one. */
  ttl: number | null;
  pollInterval: number;
}

/** A JSON-RPC error the task methods answer with. */
export class TaskRpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const isFinished = (job: BatchJob) => (finishedJobStatuses as readonly string[]).includes(job.status);

/**
 * A job as a task. A completed job whose one item failed is a failed task (the tool's call
 * failed); the reason is the item's error code, or the job's (`job_attempts_exhausted` after a
 * replica died mid-run too often). Progress grows only: queued, then running with the attempt.
 */
export function taskOf(job: BatchJob): McpTask {
  const itemFailed = job.items.some((item) => item.status === 'failed');
  const status: TaskStatus =
    job.status === 'queued' || job.status === 'running'
      ? 'working'
      : job.status === 'cancelled'
        ? 'cancelled'
        : job.status === 'failed' || itemFailed
          ? 'failed'
          : 'completed';
  const reason = job.error?.code ?? job.items.find((item) => item.error_code)?.error_code;
  const statusMessage =
    status === 'failed' ? `failed: ${reason ?? 'unknown'}` : job.status === 'running' ? `running (attempt ${job.attempts} of ${job.max_attempts})` : job.status;
  const lastUpdatedAt = job.finished_at ?? job.cancelled_at ?? job.started_at ?? job.created_at;
  const ttl = job.expires_at ? Math.max(0, Date.parse(job.expires_at) - Date.parse(job.created_at)) : null;
  return { taskId: job.job_id, status, statusMessage, createdAt: job.created_at, lastUpdatedAt, ttl, pollInterval: TASK_POLL_INTERVAL_MS };
}

/** A refused REST answer as the JSON-RPC error of a task method: an unknown or foreign id is -32602, as the spec says. */
function refusal(answer: DispatchAnswer, what: string): TaskRpcError {
  const body = (answer.json ?? { error: answer.text }) as { error?: string; code?: string };
  const invalid = answer.status === 404 || answer.status === 400 || answer.status === 409 || answer.status === 422;
  // A credential the route refuses is the server error code the SDKs answer authorization failures with, as /mcp's 401 and 403 are.
  const code = invalid ? -32602 : answer.status === 401 || answer.status === 403 ? -32000 : -32603;
  return new TaskRpcError(code, `${what}: ${body.error ?? `answered ${answer.status}`}`, { status: answer.status, ...body });
}

/** The task methods of one /mcp request, run as its caller. */
export class McpTasks {
  private readonly dispatch: ContractDispatch;
  private readonly caller: DispatchCaller;
  constructor(dispatch: ContractDispatch, caller: DispatchCaller) {
    this.dispatch = dispatch;
    this.caller = caller;
  }

  /** A task-augmented `tools/call`: the job is queued (or refused) before this answers; the work runs on any replica. */
  async create(toolName: string, args: Record<string, unknown>): Promise<{ task: McpTask }> {
    const operation = TASK_TOOL_OPERATIONS[toolName];
    // A tool without taskSupport is `forbidden` as a task: -32601, as the spec says (an unknown tool is -32602, as without a task).
    if (!operation) throw new TaskRpcError(-32601, `The tool ${toolName} does not run as a task (tools/list gives it no execution.taskSupport).`);
    const { idempotency_key: key, ...item } = args;
    // A retry with the same idempotency_key answers the same task; without one, each call is a task of its own.
    const headers = { ...this.caller.headers, 'idempotency-key': typeof key === 'string' && key !== '' ? key : `mcp-task-${randomUUID()}` };
    const answer = await this.dispatch.call(
      jobsContract.submit,
      { body: { schema: batchJobRequestSchemaId, operation, items: [item] }, bodyChecked: true },
      { ...this.caller, headers },
    );
    if (answer.status >= 300) throw refusal(answer, `The task was not created`);
    return { task: taskOf(answer.json as BatchJob) };
  }

  async get(taskId: string): Promise<McpTask> {
    return taskOf(await this.job(taskId));
  }

  /** `tasks/result`: waits until the task ends (polling the store, so the job may run on any replica), then the tool's result. */
  async result(taskId: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    let job = await this.job(taskId);
    while (!isFinished(job)) {
      await new Promise((resolve) => setTimeout(resolve, TASK_POLL_INTERVAL_MS));
      if (signal?.aborted) throw new TaskRpcError(-32603, 'The request ended before the task did.');
      job = await this.job(taskId);
    }
    const meta = { [RELATED_TASK]: { taskId } };
    if (job.status === 'cancelled') {
      const body = { error: 'The task was cancelled before it ran.', code: 'job_cancelled' };
      return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true, _meta: meta };
    }
    const answer = await this.dispatch.call(jobsContract.result, { params: { job_id: taskId } }, this.caller);
    if (answer.status >= 300) throw refusal(answer, `The task's result`);
    const outcome = (answer.json as BatchJobResult).items[0];
    // The item's answer is the tool's REST answer, as a plain call gives it; a failure is the REST error shape.
    const structured =
      outcome?.status === 'succeeded'
        ? (outcome.result as Record<string, unknown>)
        : { error: outcome?.error.message ?? job.error?.message ?? 'The task failed.', code: outcome?.error.code ?? job.error?.code ?? 'job_failed' };
    const isError = outcome?.status !== 'succeeded';
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, ...(isError ? { isError } : {}), _meta: meta };
  }

  async list(cursor?: string): Promise<{ tasks: McpTask[]; nextCursor?: string }> {
    const answer = await this.dispatch.call(jobsContract.list, { query: cursor ? { cursor } : {} }, this.caller);
    if (answer.status >= 300) throw refusal(answer, 'The task list');
    const page = answer.json as { data: BatchJob[]; next_cursor: string | null };
    return { tasks: page.data.map(taskOf), ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}) };
  }

  /**
   * Only a task that has not started can be cancelled (the queue's rule: a running item is not
   * interrupted); anything else is -32602 naming its status, a task that has ended included (the
   * spec's rule; the job route itself answers a repeated cancel with the cancelled job).
   */
  async cancel(taskId: string): Promise<McpTask> {
    const job = await this.job(taskId);
    if (isFinished(job))
      throw new TaskRpcError(-32602, `Task ${taskId} has ended (${job.status}): it cannot be cancelled.`, {
        status: 409,
        code: `job_not_cancellable:${job.status}`,
      });
    const answer = await this.dispatch.call(jobsContract.cancel, { params: { job_id: taskId } }, this.caller);
    if (answer.status >= 300) throw refusal(answer, 'The task was not cancelled');
    return taskOf(answer.json as BatchJob);
  }

  private async job(taskId: string): Promise<BatchJob> {
    const answer = await this.dispatch.call(jobsContract.get, { params: { job_id: taskId } }, this.caller);
    if (answer.status >= 300) throw refusal(answer, `Task ${taskId}`);
    return answer.json as BatchJob;
  }
}

type RpcMessage = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: Record<string, unknown> };

/** Whether a single JSON-RPC message is one the task methods answer (a batch goes to the SDK, which has no task methods). */
export function isTaskMessage(body: unknown): body is RpcMessage & { id: string | number } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as RpcMessage;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return false;
  if (message.method === 'tools/call') return typeof message.params?.task === 'object' && message.params.task !== null;
  return message.method === 'tasks/get' || message.method === 'tasks/result' || message.method === 'tasks/list' || message.method === 'tasks/cancel';
}

/** Answers one task message as a JSON-RPC response object. */
export async function answerTaskMessage(
  tasks: McpTasks,
  message: RpcMessage & { id: string | number },
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const params = message.params ?? {};
  const taskId = () => {
    if (typeof params.taskId !== 'string' || params.taskId === '') throw new TaskRpcError(-32602, 'params.taskId must be a task id.');
    return params.taskId;
  };
  try {
    let result: unknown;
    if (message.method === 'tools/call') {
      const args = params.arguments ?? {};
      if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new TaskRpcError(-32602, 'params.arguments must be an object.');
      result = await tasks.create(String(params.name), args as Record<string, unknown>);
    } else if (message.method === 'tasks/get') result = await tasks.get(taskId());
    else if (message.method === 'tasks/result') result = await tasks.result(taskId(), signal);
    else if (message.method === 'tasks/cancel') result = await tasks.cancel(taskId());
    else result = await tasks.list(typeof params.cursor === 'string' ? params.cursor : undefined);
    return { jsonrpc: '2.0', id: message.id, result };
  } catch (error) {
    if (!(error instanceof TaskRpcError)) throw error;
    return { jsonrpc: '2.0', id: message.id, error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
  }
}
