import type { z } from 'zod';
import {
  A2A_TRIAL_TASK_ID,
  A2aGetTaskParams,
  A2aJsonRpcEnvelope,
  A2aMessageSendParamsV03,
  A2aSendMessageParamsV10,
  type JsonRpcError,
  type A2aJsonRpcSuccess,
} from '@svc/schemas';
import { firstIssue, openEnvelope, RPC, rpcError, type RpcId } from './a2a-json-rpc.ts';
import type { TrialTask } from './a2a-trial.ts';

const METHODS = 'message/send and tasks/get (A2A 0.3), SendMessage and GetTask (A2A 1.0)';

export type A2aAnswer = { status: 200; body: A2aJsonRpcSuccess } | { status: 400 | 404; body: JsonRpcError };

function failure(status: 400 | 404, id: RpcId, code: number, svcCode: string, message: string, requestId: string): A2aAnswer {
  return { status, body: rpcError(id, code, svcCode, message, requestId) };
}

/** History trimmed to the newest `historyLength` messages when the caller asks (0 means none). */
function withHistory<T extends { history: unknown[] }>(task: T, historyLength: number | undefined): T {
  return historyLength === undefined ? task : { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) };
}

/**
 * One A2A JSON-RPC request against the public trial. Nothing the caller sends is run: every
 * message is answered with the same completed task, so the answer depends only on the method
 * (which picks the protocol version) and on the request being well formed.
 */
export function answerA2aRequest(body: unknown, versionHeader: string | undefined, trial: TrialTask, requestId: string): A2aAnswer {
  const opened = openEnvelope(A2aJsonRpcEnvelope, body, versionHeader, requestId);
  if (!opened.ok) return { status: 400, body: opened.refusal };
  const { id, method, params } = opened.envelope;
  const checked = <S extends z.ZodType>(schema: S): { ok: true; value: z.output<S> } | { ok: false; answer: A2aAnswer } => {
    const parsed = schema.safeParse(params);
    if (parsed.success) return { ok: true, value: parsed.data };
    return {
      ok: false,
      answer: failure(400, id, RPC.invalidParams, 'invalid_json_rpc:params', `Invalid params: ${firstIssue(parsed.error, 'params')}`, requestId),
    };
  };
  switch (method) {
    case 'message/send': {
      const sent = checked(A2aMessageSendParamsV03);
      return sent.ok ? { status: 200, body: { jsonrpc: '2.0', id, result: trial.v03 } } : sent.answer;
    }
    case 'SendMessage': {
      const sent = checked(A2aSendMessageParamsV10);
      return sent.ok ? { status: 200, body: { jsonrpc: '2.0', id, result: { task: trial.v10 } } } : sent.answer;
    }
    case 'tasks/get':
    case 'GetTask': {
      const asked = checked(A2aGetTaskParams);
      if (!asked.ok) return asked.answer;
      if (asked.value.id !== A2A_TRIAL_TASK_ID) {
        return failure(
          404,
          id,
          RPC.taskNotFound,
          'a2a_task_not_found',
          `Task ${asked.value.id} not found; the only task here is ${A2A_TRIAL_TASK_ID}.`,
          requestId,
        );
      }
      const task = method === 'GetTask' ? trial.v10 : trial.v03;
      return { status: 200, body: { jsonrpc: '2.0', id, result: withHistory(task, asked.value.historyLength) } };
    }
    default:
      return failure(404, id, RPC.methodNotFound, 'a2a_method_not_found', `Method ${method} not found; this agent answers ${METHODS}.`, requestId);
  }
}
