import type { RequestContext } from '../../http/request-context.ts';
import { answerTaskMessage, type McpCaller, type McpTasks, TaskRpcError } from './tasks.ts';

type TaskMessage = Parameters<typeof answerTaskMessage>[2];

/**
 * `tasks/result` of a task created with a progressToken (2025-11-25): an event stream that sends
 * the task's progress as `notifications/progress` with that token as the runner keeps it (on any
 * replica; each above the one before, as MCP requires), then the result. The spec keeps the token
 * valid for the task's life, and `tasks/result` is the request a task's messages travel on, since a
 * stateless server has no other stream to the client. Undefined (a JSON answer instead) when the
 * client does not take an event stream, the call gave no token, or the task is not the caller's
 * (answered as the JSON error).
 */
export async function streamTaskResult(tasks: McpTasks, caller: McpCaller, message: TaskMessage, request: RequestContext): Promise<Response | undefined> {
  const taskId = message.params?.taskId;
  if (message.method !== 'tasks/result' || typeof taskId !== 'string' || taskId === '') return undefined;
  if (!String(request.headers.accept ?? '').includes('text/event-stream')) return undefined;
  let followed: Awaited<ReturnType<McpTasks['followProgress']>>;
  try {
    followed = await tasks.followProgress(caller, taskId, request.signal);
  } catch (error) {
    if (error instanceof TaskRpcError) return undefined;
    throw error;
  }
  if (!followed) return undefined;
  const { progressToken, steps } = followed;
  const encoder = new TextEncoder();
  const frame = (payload: unknown) => encoder.encode(`event: message\ndata: ${JSON.stringify(payload)}\n\n`);
  async function* frames() {
    for await (const step of steps) yield frame({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken, ...step } });
    yield frame(await answerTaskMessage(tasks, caller, message, request.signal));
  }
  const iterator = frames();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    // The client went away: stop following the task (the task itself runs on).
    async cancel() {
      await iterator.return(undefined);
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } });
}
