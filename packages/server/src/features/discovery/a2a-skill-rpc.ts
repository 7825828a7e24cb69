import type { z } from 'zod';
import {
  A2aAuthenticatedEnvelope,
  A2aCancelTaskParams,
  A2aGetTaskParams,
  A2aSkillSendParamsV03,
  A2aSkillSendParamsV10,
  a2aLimits,
  type JsonRpcError,
  type Principal,
  type SseMessage,
} from '@svc/schemas';
import { principalToCarry } from '../../http/auth.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { principalKey } from '../identity/index.ts';
import type { RouteEvent } from './a2a-skill-stream.ts';
import { firstIssue, openEnvelope, RPC, rpcError, type RpcId } from './a2a-json-rpc.ts';
import type { TrialTask } from './a2a-trial.ts';
import type { A2aTaskRunner } from './a2a-task-runner.ts';
import { dispatchInputOf, historyMessage, SkillInputError, skillOf } from './a2a-skills.ts';
import {
  incomingV03,
  incomingV10,
  renderArtifactUpdate,
  renderSendResult,
  renderStatusUpdate,
  renderStreamTask,
  renderTask,
  type IncomingMessage,
  type NeutralTask,
  type Version,
} from './a2a-wire.ts';

const METHODS =
  'message/send, message/stream, tasks/get, tasks/cancel and agent/getAuthenticatedExtendedCard (A2A 0.3); SendMessage, SendStreamingMessage, GetTask, CancelTask and GetExtendedAgentCard (A2A 1.0)';

type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 429;
type RpcSuccess = { jsonrpc: '2.0'; id: string | number; result: Record<string, unknown> };
export type SkillRpcAnswer =
  | { status: 200; body: RpcSuccess | AsyncIterable<SseMessage<RpcSuccess>>; headers?: Record<string, string> }
  | { status: ErrorStatus; body: JsonRpcError; headers?: Record<string, string> };

function failure(
  status: ErrorStatus,
  id: RpcId,
  code: number,
  svcCode: string,
  message: string,
  requestId: string,
  headers?: Record<string, string>,
): SkillRpcAnswer {
  return { status, headers, body: rpcError(id, code, svcCode, message, requestId) };
}

export const holdsInvoke = (principal: Principal) => principal.kind === 'operator' || principal.scopes.includes('inference:invoke');

export interface SkillRpcDeps {
  runner: A2aTaskRunner;
  trial: () => TrialTask;
  /** The card listing the skills this principal may use. */
  extendedCard: (principal: Principal) => Record<string, unknown>;
  /** `WWW-Authenticate` of a 401 (RFC 9728 resource metadata). */
  challenge: (error?: string) => string;
}

/**
 * One A2A JSON-RPC request from a caller who sent a credential. The trial's answers stay as they
 * are for a message naming no skill; a named skill runs its REST route as a stored task.
 */
export async function answerSkillRequest(
  deps: SkillRpcDeps,
  body: unknown,
  versionHeader: string | undefined,
  request: RequestContext,
): Promise<SkillRpcAnswer> {
  const { requestId, principal } = request;
  const opened = openEnvelope(A2aAuthenticatedEnvelope, body, versionHeader, requestId);
  if (!opened.ok) return { status: 400, body: opened.refusal };
  const { id, method, params } = opened.envelope;
  // A credential was sent but no resolver took it (unknown, expired, revoked): not a trial call.
  if (principal.kind === 'anonymous')
    return failure(401, id, RPC.server, 'invalid_token', 'The bearer token is not valid.', requestId, { 'www-authenticate': deps.challenge('invalid_token') });
  const checked = <S extends z.ZodType>(schema: S): { ok: true; value: z.output<S> } | { ok: false; answer: SkillRpcAnswer } => {
    const parsed = schema.safeParse(params);
    if (parsed.success) return { ok: true, value: parsed.data };
    return {
      ok: false,
      answer: failure(400, id, RPC.invalidParams, 'invalid_json_rpc:params', `Invalid params: ${firstIssue(parsed.error, 'params')}`, requestId),
    };
  };
  const success = (result: Record<string, unknown>): SkillRpcAnswer => ({ status: 200, body: { jsonrpc: '2.0', id, result } });
  const owner = principalKey(principal);
  const version: Version = method.includes('/') ? '0.3' : '1.0';
  switch (method) {
    case 'agent/getAuthenticatedExtendedCard':
    case 'GetExtendedAgentCard':
      return success(deps.extendedCard(principal));
    case 'tasks/get':
    case 'GetTask': {
      const asked = checked(A2aGetTaskParams);
      if (!asked.ok) return asked.answer;
      const task = await deps.runner.get(owner, asked.value.id);
      if (!task) return taskNotFound(id, asked.value.id, requestId);
      return success(renderTask(version, task, asked.value.historyLength));
    }
    case 'tasks/cancel':
    case 'CancelTask': {
      const asked = checked(A2aCancelTaskParams);
      if (!asked.ok) return asked.answer;
      const task = await deps.runner.cancel(owner, asked.value.id);
      if (!task) return taskNotFound(id, asked.value.id, requestId);
      if (task.state !== 'canceled')
        return failure(
          409,
          id,
          RPC.taskNotCancelable,
          'a2a_task_not_cancelable',
          `Task ${task.id} is ${task.state}; only a running task can be canceled.`,
          requestId,
        );
      return success(renderTask(version, task));
    }
    case 'message/send':
    case 'SendMessage':
    case 'message/stream':
    case 'SendStreamingMessage': {
      const streams = method === 'message/stream' || method === 'SendStreamingMessage';
      let message: IncomingMessage;
      if (version === '0.3') {
        const sent = checked(A2aSkillSendParamsV03);
        if (!sent.ok) return sent.answer;
        message = incomingV03(sent.value);
      } else {
        const sent = checked(A2aSkillSendParamsV10);
        if (!sent.ok) return sent.answer;
        message = incomingV10(sent.value);
      }
      if (!holdsInvoke(principal)) {
        return failure(
          403,
          id,
          RPC.server,
          'insufficient_scope:inference:invoke',
          'A2A skills need a credential holding the scope inference:invoke.',
          requestId,
          {
            'www-authenticate': 'Bearer realm="svc", error="insufficient_scope", scope="inference:invoke"',
          },
        );
      }
      let started: { task: NeutralTask; done: Promise<NeutralTask> } | undefined;
      const progress = streams ? new EventQueue<RouteEvent>() : undefined;
      try {
        const skill = skillOf(message);
        if (!skill) return trialAnswer(deps.trial(), version, id, streams);
        const input = dispatchInputOf(skill, message);
        started = await deps.runner.start({
          owner,
          skill,
          input,
          contextId: message.contextId,
          history: historyMessage(message, request.headers['content-length'] === undefined ? undefined : Number(request.headers['content-length'])),
          // The skill's route takes the principal this request resolved, not resolving the credential again.
          caller: { authorization: String(request.headers.authorization ?? ''), principal: principalToCarry(request), ip: request.ip },
          // A blocking call or a stream is the caller's connection: going away cancels it, as on REST.
          // A task answered at once runs on under its deadline and `tasks/cancel`.
          connection: message.returnImmediately && !streams ? undefined : request.signal,
          onEvent: progress ? (event) => progress.push(event) : undefined,
        });
        if (!started) {
          return failure(
            429,
            id,
            RPC.server,
            'a2a_tasks_running',
            `${a2aLimits.maxRunningPerPrincipal} tasks of this caller are running; wait for one to end or cancel one.`,
            requestId,
            { 'retry-after': '1' },
          );
        }
      } catch (error) {
        if (error instanceof SkillInputError) return failure(400, id, RPC.invalidParams, error.svcCode, error.message, requestId);
        throw error;
      }
      if (progress) {
        void started.done.finally(() => progress.close());
        return { status: 200, body: streamOf(version, id, started, progress) };
      }
      if (message.returnImmediately) return success(renderSendResult(version, started.task, message.historyLength));
      return success(renderSendResult(version, await started.done, message.historyLength));
    }
    default:
      return failure(404, id, RPC.methodNotFound, 'a2a_method_not_found', `Method ${method} not found; this agent answers ${METHODS}.`, requestId);
  }
}

function taskNotFound(id: RpcId, taskId: string, requestId: string): SkillRpcAnswer {
  return failure(
    404,
    id,
    RPC.taskNotFound,
    'a2a_task_not_found',
    `Task ${taskId} not found for this caller (unknown, another caller's, or past its retention).`,
    requestId,
  );
}

/** A message naming no skill: the trial's task, as a caller without a credential gets it. */
function trialAnswer(trial: TrialTask, version: Version, id: string | number, streams: boolean): SkillRpcAnswer {
  const task = version === '0.3' ? trial.v03 : trial.v10;
  const result = version === '0.3' ? task : { task };
  if (!streams) return { status: 200, body: { jsonrpc: '2.0', id, result } };
  return {
    status: 200,
    body: (async function* () {
      yield { event: 'message', data: { jsonrpc: '2.0' as const, id, result } };
    })(),
  };
}

/** The route's events of a running task, taken as they come; closed when the task ends. */
class EventQueue<T> {
  readonly #items: T[] = [];
  #closed = false;
  #wake: (() => void) | undefined;

  push(item: T): void {
    this.#items.push(item);
    this.#wake?.();
  }

  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  async *drain(): AsyncGenerator<T> {
    for (;;) {
      while (this.#items.length > 0) yield this.#items.shift()!;
      if (this.#closed) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}

/**
 * The stream of a task: the task as it starts, the route's own events as they come (one
 * `progress` artifact, appended to, each chunk a data part `{ event, data }`: pages, sentences,
 * passages), then the result artifact and the final status.
 */
async function* streamOf(
  version: Version,
  id: string | number,
  started: { task: NeutralTask; done: Promise<NeutralTask> },
  progress: EventQueue<RouteEvent>,
): AsyncIterable<SseMessage<RpcSuccess>> {
  const event = (result: Record<string, unknown>): SseMessage<RpcSuccess> => ({ event: 'message', data: { jsonrpc: '2.0', id, result } });
  yield event(renderStreamTask(version, started.task));
  let chunks = 0;
  for await (const routeEvent of progress.drain()) {
    const artifact = { artifactId: `${started.task.id}-progress`, name: 'progress', parts: [{ data: { event: routeEvent.event, data: routeEvent.data } }] };
    yield event(renderArtifactUpdate(version, started.task, artifact, { append: chunks++ > 0, lastChunk: false }));
  }
  const done = await started.done;
  for (const artifact of done.artifacts) yield event(renderArtifactUpdate(version, done, artifact));
  yield event(renderStatusUpdate(version, done));
}
