import type { AgentTool, Principal, ValidationIssue } from '@svc/schemas';
import type { ContractDispatch, DispatchCaller } from '../../http/dispatch.ts';
import { parsePart } from '../../http/validate.ts';
import { principalKey } from '../identity/index.ts';
import { ENDED, type TaskEnd, type TaskRow, type TaskRun, type Tasks } from '../tasks/index.ts';
import { TASK_TOOLS } from './task-tools.ts';
import { callTool, requestOf, type ToolCatalogue, type ToolResult } from './tool-calls.ts';

/**
 * MCP Tasks on svc's durable task store (features/tasks, docs/tasks.md): a task-augmented
 * `tools/call` is a task of kind `mcp.tool_call`, queued at once and run by whichever replica
 * claims it, through the tool's REST route as the caller (the route's key limits, credits and
 * operation limits apply when it runs). `tasks/get`, `tasks/result`, `tasks/list` and
 * `tasks/cancel` read the store, so every replica answers them; a cancel from any replica aborts
 * the run's route (its engine follows the abort as on a REST disconnect); `kill -9` of the replica
 * running a task puts it back in the queue once, then ends it `failed` (`task_runner_lost`).
 * Only the credential's principal sees its tasks. Served at 2025-11-25 (core `tasks/*`) and at
 * 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, tasks-extension.ts).
 */
export const MCP_TASK_KIND = 'mcp.tool_call';

/** How often a client should poll `tasks/get` (the Task's pollInterval). */
export const TASK_POLL_INTERVAL_MS = 500;
/** How long `tasks/cancel` waits for a running task's runner (on any replica) to stop before answering it as it is then. */
const CANCEL_WAIT_MS = 5_000;
/** A `tasks/list` page. */
const LIST_PAGE = 50;
/**
 * The bearer a task's run carries with the principal its creator's credential resolved to (never
 * the secret, which the store would otherwise hold): a carried principal is taken as resolved, and
 * the route checks its requirement on it as REST does (DispatchCaller.principal).
 */
const TASK_RUN_BEARER = 'Bearer svc-task-run';

/** The server capability a 2025-11-25 client checks before it augments a call with a task. */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } } as const;

export type McpTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The 2025-11-25 Task. */
export interface McpTask {
  taskId: string;
  status: McpTaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** Milliseconds from creation the task is kept: known once it ended. */
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

/** What a task keeps to run the call on any replica. */
interface McpTaskInput {
  tool: string;
  arguments: Record<string, unknown>;
  /** The principal the creator's credential resolved to; absent for a caller without one (open access). */
  principal?: Principal;
  ip: string;
  /** The creating request's `_meta.progressToken`: the task's progress is sent with it on `tasks/result` (progress-stream.ts). */
  progressToken?: string | number;
}

/** A progress step, kept as the task's event `progress`. */
export interface TaskProgress {
  progress: number;
  total?: number;
  message?: string;
}

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
/** The 2025-11-25 task wire's revision; at 2026-07-28 the extension is served (tasks-extension.ts). */
export const TASKS_REVISION = '2025-11-25';

/**
 * A stored task as MCP's Task. A tool whose route refused (the call's `isError` result) is a
 * failed task; the reason is the REST error code, or the store's (`task_runner_lost` after its
 * runner died on each attempt). While it runs, the message is its last progress.
 */
export function taskOf(row: TaskRow, progress?: TaskProgress): McpTask {
  const status: McpTaskStatus =
    row.status === 'queued' || row.status === 'in_progress'
      ? 'working'
      : row.status === 'completed'
        ? 'completed'
        : row.status === 'cancelled'
          ? 'cancelled'
          : 'failed';
  const running = `running (attempt ${row.attempts} of ${row.max_attempts})`;
  const statusMessage =
    status === 'failed'
      ? `failed: ${row.error_code ?? 'unknown'}${row.error_message ? `: ${row.error_message}` : ''}`
      : row.status === 'in_progress'
        ? progress
          ? `${running}: ${progressText(progress)}`
          : running
        : row.status;
  const lastUpdatedAt = (row.finished_at ?? row.started_at ?? row.created_at).toISOString();
  const ttl = row.expires_at ? Math.max(0, row.expires_at.getTime() - row.created_at.getTime()) : null;
  return { taskId: row.id, status, statusMessage, createdAt: row.created_at.toISOString(), lastUpdatedAt, ttl, pollInterval: TASK_POLL_INTERVAL_MS };
}

function progressText(progress: TaskProgress): string {
  const count = progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`;
  return progress.message ? `${count} ${progress.message}` : count;
}

/** The REST validation error of arguments the route would refuse, checked before a task is created (nothing is stored for them). */
function refusedArguments(tool: AgentTool, args: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const name in args)
    if (!tool.placement[name]) issues.push({ loc: ['arguments', name], msg: `Unrecognized argument: ${name}`, type: 'unrecognized_keys' });
  if (issues.length > 0) return issues;
  const { input } = requestOf(tool, args);
  parsePart(tool.route.params, input.params, 'path', issues);
  parsePart(tool.route.query, input.query, 'query', issues);
  if (tool.route.body) parsePart(tool.route.body, input.body, 'body', issues);
  return issues;
}

/** What the MCP tasks reach for: the store, the REST routes the runs go through, the tools, and the per-owner cap. */
export interface McpTasksDeps {
  readonly tasks: Tasks;
  readonly dispatch: ContractDispatch;
  readonly catalogue: ToolCatalogue;
  /** Tasks one principal may have queued or running at once (SVC_MCP_TASKS_MAX_ACTIVE). */
  readonly maxActive: number;
}

/** The task methods, for the callers of /mcp; `register` makes this process run tasks too. */
export class McpTasks {
  readonly #deps: McpTasksDeps;
  constructor(deps: McpTasksDeps) {
    this.#deps = deps;
  }

  /** Runs MCP tasks in this process (any replica takes up any task), once its routes can be called. */
  register(): void {
    void this.#deps.dispatch.attached.then(() => this.#deps.tasks.register(MCP_TASK_KIND, (run) => this.#run(run)));
  }

  /**
   * A task-augmented `tools/call`: the call's arguments are checked as its route checks them and
   * the principal's cap on tasks not ended is taken before this answers; the work runs on any
   * replica. The endpoint checked the tool's scopes already (refuseUnauthorisedCalls).
   */
  async create(caller: McpCaller, toolName: string, args: Record<string, unknown>, progressToken?: string | number): Promise<TaskRow> {
    const tool = this.#deps.catalogue.find(toolName);
    if (!tool) throw new TaskRpcError(-32602, `Unknown tool: ${toolName}. tools/list names every tool.`);
    // A tool without taskSupport is `forbidden` as a task: -32601, as the spec says.
    if (!TASK_TOOLS.has(tool.name))
      throw new TaskRpcError(-32601, `The tool ${toolName} does not run as a task (tools/list gives it no execution.taskSupport).`);
    const issues = refusedArguments(tool, args);
    if (issues.length > 0) {
      const body = {
        error: `Invalid request: ${issues.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; ')}`,
        code: 'validation_failed',
        detail: issues,
      };
      throw new TaskRpcError(-32602, `The task was not created: ${body.error}`, { status: 422, ...body });
    }
    const { requestCount: _counted, ...principal } = caller.principal ?? ({} as Principal);
    const input: McpTaskInput = {
      tool: tool.name,
      arguments: args,
      ...(caller.principal ? { principal: principal as Principal } : {}),
      ip: caller.ip,
      ...(progressToken === undefined ? {} : { progressToken }),
    };
    const row = await this.#deps.tasks.createWithin({ active: this.#deps.maxActive }, { owner: caller.owner, kind: MCP_TASK_KIND, input });
    if (!row)
      throw new TaskRpcError(
        -32000,
        `The task was not created: you have ${this.#deps.maxActive} tasks queued or running (SVC_MCP_TASKS_MAX_ACTIVE); wait for one to end.`,
        {
          status: 429,
          code: 'tasks_active_limit',
        },
      );
    return row;
  }

  async get(caller: McpCaller, taskId: string): Promise<McpTask> {
    const row = await this.find(caller, taskId);
    return taskOf(row, row.status === 'in_progress' ? await this.progress(caller, row) : undefined);
  }

  /** The task's last progress step, if it reported one. */
  async progress(caller: McpCaller, row: TaskRow): Promise<TaskProgress | undefined> {
    if (row.event_count === 0) return undefined;
    const [last] = (await this.#deps.tasks.events(row.id, caller.owner, row.event_count - 1, 1)) ?? [];
    return last?.type === 'progress' ? (last.data as TaskProgress) : undefined;
  }

  /**
   * The progress token the task was created with, and its progress steps as they are kept (on any
   * replica) until it ends, each above the one before: a task taken up again after its runner died
   * reports from 0 again, and MCP requires each notification's progress to grow. Undefined when the
   * call gave no token (or the task is not the caller's).
   */
  async followProgress(
    caller: McpCaller,
    taskId: string,
    signal?: AbortSignal,
  ): Promise<{ progressToken: string | number; steps: AsyncGenerator<TaskProgress> } | undefined> {
    const row = await this.find(caller, taskId);
    const { progressToken } = row.input as McpTaskInput;
    if (progressToken === undefined) return undefined;
    const events = await this.#deps.tasks.follow(taskId, caller.owner, 0, signal);
    if (!events) return undefined;
    return {
      progressToken,
      steps: (async function* () {
        let reported = Number.NEGATIVE_INFINITY;
        for await (const event of events) {
          const step = event.data as TaskProgress;
          if (event.type !== 'progress' || !(step.progress > reported)) continue;
          reported = step.progress;
          yield step;
        }
      })(),
    };
  }

  /** `tasks/result`: waits (woken by the task's end on any replica) until the task ends, then the tool's result. */
  async result(caller: McpCaller, taskId: string, signal?: AbortSignal): Promise<ToolResult> {
    const row = await this.settled(caller, taskId, signal);
    return { ...resultOf(row), _meta: { [RELATED_TASK]: { taskId } } };
  }

  /** The task once ended (waiting for it, woken by its end on any replica); -32603 when `signal` ends first. */
  async settled(caller: McpCaller, taskId: string, signal?: AbortSignal, waitMs = Number.POSITIVE_INFINITY): Promise<TaskRow> {
    let row = await this.find(caller, taskId);
    if (ENDED.includes(row.status)) return row;
    const watch = this.#deps.tasks.watch(taskId);
    const until = performance.now() + waitMs;
    try {
      while (!ENDED.includes(row.status) && performance.now() < until) {
        await watch.wait(signal);
        if (signal?.aborted) throw new TaskRpcError(-32603, 'The request ended before the task did.');
        row = await this.find(caller, taskId);
      }
      return row;
    } finally {
      watch.close();
    }
  }

  async list(caller: McpCaller, cursor?: string): Promise<{ tasks: McpTask[]; nextCursor?: string }> {
    let afterId: string | undefined;
    if (cursor !== undefined) {
      afterId = Buffer.from(cursor, 'base64url').toString('utf8');
      if (!afterId.startsWith('task_')) throw new TaskRpcError(-32602, 'params.cursor is not a cursor tasks/list gave.');
    }
    const rows = await this.#deps.tasks.list(caller.owner, MCP_TASK_KIND, LIST_PAGE + 1, afterId);
    if (!rows) throw new TaskRpcError(-32602, 'params.cursor names a task that is no longer kept: list again from the start.');
    const page = rows.slice(0, LIST_PAGE);
    const next = rows.length > LIST_PAGE ? Buffer.from(page.at(-1)!.id).toString('base64url') : undefined;
    return { tasks: page.map((row) => taskOf(row)), ...(next ? { nextCursor: next } : {}) };
  }

  /**
   * Cancels a task not ended, queued or running, from any replica: a running one's route is
   * aborted where it runs, and the answer waits (up to 5 s) for it to stop. An ended task is
   * -32602 naming its status (the spec's rule).
   */
  async cancel(caller: McpCaller, taskId: string): Promise<McpTask> {
    return taskOf(await this.cancelRow(caller, taskId));
  }

  /** `cancel`, answering the task's row as it is once stopped (or after the wait). */
  async cancelRow(caller: McpCaller, taskId: string): Promise<TaskRow> {
    const before = await this.find(caller, taskId);
    if (ENDED.includes(before.status))
      throw new TaskRpcError(-32602, `Task ${taskId} has ended (${before.status}): it cannot be cancelled.`, {
        status: 409,
        code: `task_not_cancellable:${before.status}`,
      });
    const after = await this.#deps.tasks.cancel(taskId, caller.owner);
    if (!after) throw unknownTask(taskId);
    return ENDED.includes(after.status) ? after : await this.settled(caller, taskId, undefined, CANCEL_WAIT_MS);
  }

  /** The caller's MCP task; -32602 for an unknown id, another principal's task or one past retention. */
  async find(caller: McpCaller, taskId: string): Promise<TaskRow> {
    const row = await this.#deps.tasks.get(taskId, caller.owner);
    if (!row || row.kind !== MCP_TASK_KIND) throw unknownTask(taskId);
    return row;
  }

  /**
   * One run of a task, on whichever replica claimed it: the tool's REST route as its creator, its
   * progress kept as events (only a step that grows: MCP requires progress to increase), and its
   * answer as the task's end.
   */
  async #run(run: TaskRun): Promise<TaskEnd> {
    const input = run.task.input as McpTaskInput;
    const tool = this.#deps.catalogue.find(input.tool);
    if (!tool) return { status: 'failed', code: 'tool_unknown', message: `The tool ${input.tool} is not served any more.` };
    const caller: DispatchCaller = input.principal
      ? { authorization: TASK_RUN_BEARER, principal: input.principal, principalOnly: true, ip: input.ip, signal: run.signal }
      : { ip: input.ip, signal: run.signal };
    let reported = Number.NEGATIVE_INFINITY;
    const report = async (update: TaskProgress) => {
      if (!(update.progress > reported)) return;
      reported = update.progress;
      await run.emit('progress', update);
    };
    const result = await callTool(this.#deps.dispatch, tool, input.arguments, caller, { report });
    if (!result.isError) return { status: 'completed', result };
    const refusal = (result.structuredContent ?? {}) as { code?: unknown; error?: unknown };
    return {
      status: 'failed',
      result,
      code: typeof refusal.code === 'string' ? refusal.code : 'tool_failed',
      message: typeof refusal.error === 'string' ? refusal.error : 'The tool call failed.',
    };
  }
}

/** The tool result of an ended task: what the plain call would have answered, or why there is none. */
export function resultOf(row: TaskRow): ToolResult {
  if (row.result) return row.result as ToolResult;
  const body =
    row.status === 'cancelled'
      ? { error: 'The task was cancelled before it answered.', code: 'task_cancelled' }
      : { error: row.error_message ?? 'The task failed.', code: row.error_code ?? 'task_failed' };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true };
}

const unknownTask = (taskId: string) =>
  new TaskRpcError(-32602, `No task ${taskId} of yours: it was never made with this credential's principal, or it expired.`, {
    status: 404,
    code: 'task_not_found',
  });

/** Who calls the task methods: the owner key of their tasks, and what a run needs to act as them. */
export interface McpCaller {
  readonly owner: string;
  readonly principal: Principal | undefined;
  readonly ip: string;
}

/** The caller of an /mcp request: a principal resolved from its own credential, or none (open access; its tasks are the open principal's). */
export function mcpCallerOf(principal: Principal, carried: Principal | undefined, ip: string): McpCaller {
  return { owner: principalKey(principal), principal: carried, ip };
}

type RpcMessage = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: Record<string, unknown> };

/** A request's `_meta.progressToken`, when it is one (a string or an integer). */
export function progressTokenOf(params: Record<string, unknown> | undefined): string | number | undefined {
  const meta = params?._meta;
  const token = typeof meta === 'object' && meta !== null ? (meta as { progressToken?: unknown }).progressToken : undefined;
  return typeof token === 'string' || (typeof token === 'number' && Number.isInteger(token)) ? token : undefined;
}

/** Whether a single JSON-RPC message is one the 2025-11-25 task methods answer (a batch goes to the SDK, which has no task methods). */
export function isTaskMessage(body: unknown): body is RpcMessage & { id: string | number } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const message = body as RpcMessage;
  if (typeof message.id !== 'string' && typeof message.id !== 'number') return false;
  if (message.method === 'tools/call') return typeof message.params?.task === 'object' && message.params.task !== null;
  return message.method === 'tasks/get' || message.method === 'tasks/result' || message.method === 'tasks/list' || message.method === 'tasks/cancel';
}

/** Answers one 2025-11-25 task message as a JSON-RPC response object. */
export async function answerTaskMessage(
  tasks: McpTasks,
  caller: McpCaller,
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
      result = { task: taskOf(await tasks.create(caller, String(params.name), args as Record<string, unknown>, progressTokenOf(params))) };
    } else if (message.method === 'tasks/get') result = await tasks.get(caller, taskId());
    else if (message.method === 'tasks/result') result = await tasks.result(caller, taskId(), signal);
    else if (message.method === 'tasks/cancel') result = await tasks.cancel(caller, taskId());
    else result = await tasks.list(caller, typeof params.cursor === 'string' ? params.cursor : undefined);
    return { jsonrpc: '2.0', id: message.id, result };
  } catch (error) {
    if (!(error instanceof TaskRpcError)) throw error;
    return { jsonrpc: '2.0', id: message.id, error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
  }
}
