import type { TaskRow } from '../tasks/index.ts';
import { TASK_TOOLS } from './task-tools.ts';
import { type McpCaller, type McpTasks, progressTokenOf, resultOf, TaskRpcError, taskOf } from './tasks.ts';

/**
 * The MCP Tasks extension at 2026-07-28 (`io.modelcontextprotocol/tasks`, the wire
 * `@modelcontextprotocol/ext-tasks` speaks), on the same tasks as the 2025-11-25 methods
 * (tasks.ts): the server says `capabilities.extensions["io.modelcontextprotocol/tasks"]: {}`; a
 * client that declares the extension in a `tools/call`'s
 * `_meta["io.modelcontextprotocol/clientCapabilities"]` gets a task (`resultType: "task"`) for a
 * tool whose work can be long (TASK_TOOLS), and follows it with `tasks/get` (the detailed task: its
 * result or error inline once ended) and `tasks/cancel`. svc asks for no input, so a task is never
 * `input_required` and `tasks/update` is refused.
 */
export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';
/** The revision the extension is served at. */
export const TASKS_EXTENSION_REVISION = '2026-07-28';
const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';

type RpcMessage = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: Record<string, unknown> };

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** Whether the request declares the extension (per request, as the 2026-07-28 framing carries client capabilities). */
function declaresExtension(params: Record<string, unknown> | undefined): boolean {
  const capabilities = record(record(params?._meta)?.[CLIENT_CAPABILITIES_META]);
  return record(record(capabilities?.extensions)?.[TASKS_EXTENSION_ID]) !== undefined;
}

/**
 * Whether a single JSON-RPC message is one the extension answers: a `tools/call` of a long tool
 * from a client that declares it, or a `tasks/*` method. Anything else (a batch, a quick tool) goes
 * to the SDK as before.
 */
export function isExtensionTaskMessage(body: unknown): body is RpcMessage & { id: string | number } {
  const message = record(body) as RpcMessage | undefined;
  if (!message || (typeof message.id !== 'string' && typeof message.id !== 'number')) return false;
  if (message.method === 'tools/call') return declaresExtension(message.params) && TASK_TOOLS.has(String(message.params?.name));
  return message.method === 'tasks/get' || message.method === 'tasks/cancel' || message.method === 'tasks/update';
}

/** The 2026-07-28 Task: the 2025-11-25 one's fields, renamed (`ttlMs`, `pollIntervalMs`). */
function taskV2(row: TaskRow, progress?: Parameters<typeof taskOf>[1]) {
  const { taskId, statusMessage, createdAt, lastUpdatedAt, ttl, pollInterval } = taskOf(row, progress);
  return { taskId, ...(statusMessage ? { statusMessage } : {}), createdAt, lastUpdatedAt, ttlMs: ttl, pollIntervalMs: pollInterval };
}

/**
 * The detailed task of `tasks/get`. A tool whose route refused answered a result (`isError`, the
 * REST error), so its task is `completed` with that result, as a plain call answers it; `failed`
 * is for a task that has no answer (its runner died on each attempt), with the reason as `data`.
 */
function detailedTask(row: TaskRow, progress?: Parameters<typeof taskOf>[1]) {
  const base = taskV2(row, progress);
  if (row.status === 'queued' || row.status === 'in_progress') return { ...base, status: 'working' as const };
  if (row.status === 'cancelled') return { ...base, status: 'cancelled' as const };
  if (row.result) return { ...base, status: 'completed' as const, result: { resultType: 'complete', ...resultOf(row) } };
  return {
    ...base,
    status: 'failed' as const,
    error: { code: -32603, message: row.error_message ?? 'The task failed.', data: { code: row.error_code ?? 'task_failed' } },
  };
}

/** Answers one extension message as a JSON-RPC response object. */
export async function answerExtensionTaskMessage(
  tasks: McpTasks,
  caller: McpCaller,
  message: RpcMessage & { id: string | number },
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
      const row = await tasks.create(caller, String(params.name), args as Record<string, unknown>, progressTokenOf(params));
      result = { ...taskV2(row), status: 'working', resultType: 'task' };
    } else if (message.method === 'tasks/get') {
      const row = await tasks.find(caller, taskId());
      result = { ...detailedTask(row, row.status === 'in_progress' ? await tasks.progress(caller, row) : undefined), resultType: 'complete' };
    } else if (message.method === 'tasks/cancel') {
      await tasks.cancelRow(caller, taskId());
      result = { resultType: 'complete' };
    } else {
      await tasks.find(caller, taskId());
      throw new TaskRpcError(-32602, `Task ${taskId()} asks for no input: svc's tasks are never input_required.`);
    }
    return { jsonrpc: '2.0', id: message.id, result };
  } catch (error) {
    if (!(error instanceof TaskRpcError)) throw error;
    return { jsonrpc: '2.0', id: message.id, error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
  }
}
