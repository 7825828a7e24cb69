import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { a2aLimits } from '@svc/schemas';
import type { ContractDispatch, DispatchCaller, DispatchInput } from '../../http/dispatch.ts';
import { ENDED, type TaskEnd, type TaskRun, type Tasks } from '../tasks/index.ts';
import { readRouteEvents, readWhole, streamsEvents, type RouteEvent } from './a2a-skill-stream.ts';
import { failureMessage, resultArtifact, type Skill } from './a2a-skills.ts';
import { A2A_KIND, storable, taskOf, type A2aTaskInput, type A2aTaskResult } from './a2a-task-view.ts';
import type { NeutralArtifact, NeutralMessage, NeutralTask, TaskState } from './a2a-wire.ts';

/** How long `tasks/cancel` waits for the runner (on any replica) to stop before answering the task as it reads then (canceled). */
const CANCEL_WAIT_MS = 5_000;

export interface StartTask {
  owner: string;
  skill: Skill;
  input: DispatchInput;
  contextId: string | undefined;
  history: NeutralMessage;
  caller: Omit<DispatchCaller, 'signal'>;
  /** The caller's connection, when the task lives only as long as it (a blocking call, a stream). */
  connection: AbortSignal | undefined;
  /** A streaming caller's: the route's own events as they come (pages, sentences, passages), when the route streams. */
  onEvent?: ((event: RouteEvent) => void) | undefined;
}

type Ending = { state: TaskState; message?: NeutralMessage; artifacts: NeutralArtifact[] };

type StopReason = 'deadline' | 'disconnected';

const agentSays = (taskId: string, suffix: string, text: string): NeutralMessage => ({ messageId: `${taskId}-${suffix}`, role: 'agent', parts: [{ text }] });

const STOPPED: Record<StopReason, { state: TaskState; code: string; text: string }> = {
  deadline: { state: 'failed', code: 'a2a_task_deadline', text: `The task did not finish within ${a2aLimits.taskDeadlineMs / 1000} s; its work was stopped.` },
  disconnected: { state: 'canceled', code: 'a2a_caller_disconnected', text: "The caller's connection closed before the task finished; its work was stopped." },
};

/**
 * Runs skills as tasks of the durable task store (docs/tasks.md, kind `a2a.skill`): each is its
 * REST route called in-process (ContractDispatch) with the caller's resolved principal, so it runs
 * on the replica that took the message (`runHereWithin`), while any replica reads and cancels it.
 * Its work stops on a cancel asked on any replica (the store's signal), its deadline, the caller's
 * connection (a blocking call or a stream), or shutdown; a replica killed mid-task leaves it to the
 * store, which fails it (`task_runner_lost`) once its lease runs out.
 */
export class A2aTaskRunner {
  readonly #tasks: Tasks;
  readonly #dispatch: ContractDispatch;
  readonly #log: Logger;

  constructor(tasks: Tasks, dispatch: ContractDispatch, log: Logger) {
    this.#tasks = tasks;
    this.#dispatch = dispatch;
    this.#log = log;
  }

  /**
   * Stores the task as working and starts its work; `done` settles with the task as it ended.
   * Undefined, and nothing stored or started, when the owner already has `a2aLimits.maxRunningPerPrincipal`
   * tasks running on any replica (the store counts them in the database).
   */
  async start(args: StartTask): Promise<{ task: NeutralTask; done: Promise<NeutralTask> } | undefined> {
    const input: A2aTaskInput = {
      contextId: args.contextId ?? `ctx-${randomBytes(12).toString('base64url')}`,
      skill: args.skill.id,
      history: [args.history],
    };
    const started = await this.#tasks.runHereWithin(
      { running: a2aLimits.maxRunningPerPrincipal, kept: a2aLimits.maxKeptPerPrincipal },
      { id: `a2a-${randomBytes(18).toString('base64url')}`, owner: args.owner, kind: A2A_KIND, input },
      (run) => this.#run(run, args),
    );
    if (!started) return undefined;
    const task = taskOf(started.row);
    const done = started.ended.then(async () => {
      const row = await this.#tasks.get(task.id, args.owner);
      return row ? taskOf(row) : { ...task, state: 'failed' as const };
    });
    return { task, done };
  }

  /** One run: the skill's work under the task's signal, its deadline and the caller's connection; how it ended, as the store keeps it. */
  async #run(run: TaskRun, args: StartTask): Promise<TaskEnd> {
    const id = run.task.id;
    let stopped: StopReason | undefined;
    const controller = new AbortController();
    const stop = (why: StopReason) => {
      stopped ??= why;
      controller.abort(why);
    };
    const deadline = setTimeout(() => stop('deadline'), a2aLimits.taskDeadlineMs);
    const onDisconnect = () => stop('disconnected');
    if (args.connection?.aborted) stop('disconnected');
    else args.connection?.addEventListener('abort', onDisconnect, { once: true });
    const signal = AbortSignal.any([run.signal, controller.signal]);
    let ending: Ending;
    try {
      ending = await this.#work(args, id, signal);
      if (signal.aborted) throw signal.reason;
    } catch (error) {
      // A cancel asked on any replica, or this server stopping: the store ends the task and says why.
      if (run.signal.aborted) throw error;
      if (!stopped) {
        // Not the skill's answer (that is a failed ending above): svc's own fault, kept out of the task.
        this.#log.error({ err: error, taskId: id, skill: args.skill.id }, 'a2a skill failed');
        const text = 'The skill failed inside svc; send the message again.';
        return { status: 'failed', result: { statusMessage: agentSays(id, 'failed', text), artifacts: [] }, code: 'a2a_skill_error', message: text };
      }
      const why = STOPPED[stopped];
      const message = agentSays(id, why.state, why.text);
      const result: A2aTaskResult = { statusMessage: message, artifacts: [] };
      return why.state === 'canceled'
        ? { status: 'cancelled', result, code: why.code, message: why.text }
        : { status: 'failed', result, code: why.code, message: why.text };
    } finally {
      clearTimeout(deadline);
      args.connection?.removeEventListener('abort', onDisconnect);
    }
    const result: A2aTaskResult = { statusMessage: ending.message, artifacts: storable(ending.artifacts) };
    if (ending.state === 'completed') return { status: 'completed', result };
    const text = ending.message?.parts.find((part): part is { text: string } => 'text' in part)?.text ?? 'The skill failed.';
    return { status: 'failed', result, code: 'a2a_skill_failed', message: text };
  }

  /**
   * The skill's route, called as REST would be: read whole, or, for a streaming caller and a route
   * that streams, as its own event stream whose events are handed on as they come.
   */
  async #work(args: StartTask, taskId: string, signal: AbortSignal): Promise<Ending> {
    const caller = { ...args.caller, signal };
    const body = args.input.body as Record<string, unknown> | undefined;
    if (args.onEvent && body && streamsEvents(args.skill.route)) {
      const answer = await this.#dispatch.call(args.skill.route, { ...args.input, body: { ...body, stream: true } }, caller, { stream: true });
      if (answer.status !== 200)
        return { state: 'failed', message: failureMessage(taskId, answer.status, JSON.parse(await readWhole(answer.stream!))), artifacts: [] };
      const read = await readRouteEvents(answer.stream!, args.onEvent);
      if (!read.ok) return { state: 'failed', message: failureMessage(taskId, 200, read.error as Record<string, unknown>), artifacts: [] };
      return { state: 'completed', artifacts: [resultArtifact(taskId, args.skill, read.json)] };
    }
    const answer = await this.#dispatch.call(args.skill.route, args.input, caller);
    if (answer.status >= 200 && answer.status < 300) return { state: 'completed', artifacts: [resultArtifact(taskId, args.skill, answer.json)] };
    return {
      state: 'failed',
      message: failureMessage(taskId, answer.status, (answer.json ?? { error: answer.text }) as Record<string, unknown>),
      artifacts: [],
    };
  }

  /** The owner's task, as it reads now on any replica; undefined for another's, an unknown id or one past its retention. */
  async get(owner: string, id: string): Promise<NeutralTask | undefined> {
    const row = await this.#tasks.get(id, owner);
    return row?.kind === A2A_KIND ? taskOf(row) : undefined;
  }

  /**
   * Cancels the owner's task on any replica: its runner (wherever it is) hears it and stops; the
   * answer waits for that, a short while, then reads `canceled` as every reader does. Undefined:
   * no such task.
   */
  async cancel(owner: string, id: string): Promise<NeutralTask | undefined> {
    const found = await this.#tasks.get(id, owner);
    if (found?.kind !== A2A_KIND) return undefined;
    const watch = this.#tasks.watch(id);
    try {
      let row = await this.#tasks.cancel(id, owner);
      const until = Date.now() + CANCEL_WAIT_MS;
      while (row?.cancel_requested && !ENDED.includes(row.status) && Date.now() < until) {
        await watch.wait(AbortSignal.timeout(Math.max(1, until - Date.now())));
        row = await this.#tasks.get(id, owner);
      }
      return row ? taskOf(row) : undefined;
    } finally {
      watch.close();
    }
  }
}
