import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { a2aLimits } from '@svc/schemas';
import type { ContractDispatch, DispatchCaller, DispatchInput } from '../../http/dispatch.ts';
import { readRouteEvents, readWhole, streamsEvents, type RouteEvent } from './a2a-skill-stream.ts';
import { failureMessage, resultArtifact, type Skill } from './a2a-skills.ts';
import type { A2aTaskStore } from './a2a-task-store.ts';
import type { NeutralArtifact, NeutralMessage, NeutralTask, TaskState } from './a2a-wire.ts';

/** How often a running task asks the database whether another replica was told to cancel it. */
const CANCEL_POLL_MS = 500;

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

type StopReason = 'canceled' | 'deadline' | 'disconnected' | 'shutdown';

const agentSays = (taskId: string, suffix: string, text: string): NeutralMessage => ({ messageId: `${taskId}-${suffix}`, role: 'agent', parts: [{ text }] });

const STOPPED: Record<Exclude<StopReason, 'canceled'>, { state: TaskState; text: string }> = {
  deadline: { state: 'failed', text: `The task did not finish within ${a2aLimits.taskDeadlineMs / 1000} s; its work was stopped.` },
  disconnected: { state: 'canceled', text: "The caller's connection closed before the task finished; its work was stopped." },
  shutdown: { state: 'failed', text: 'The server shut down before the task finished; send the message again (another replica will answer).' },
};

/**
 * Runs skills as tasks: each is its REST route called in-process (ContractDispatch) under an
 * AbortController that a deadline, `tasks/cancel` (on this replica at once, on another through the
 * database within CANCEL_POLL_MS), the caller's connection, or shutdown aborts. The task's row
 * follows it: working, then completed, failed or canceled.
 */
export class A2aTaskRunner {
  readonly #running = new Map<string, { owner: string; stop: (reason: StopReason) => void; done: Promise<NeutralTask> }>();
  readonly #store: A2aTaskStore;
  readonly #dispatch: ContractDispatch;
  readonly #log: Logger;

  constructor(store: A2aTaskStore, dispatch: ContractDispatch, log: Logger) {
    this.#store = store;
    this.#dispatch = dispatch;
    this.#log = log;
  }

  /**
   * Stores the task as working and starts its work; `done` settles with the task as it ended.
   * Undefined, and nothing stored or started, when the owner already has `a2aLimits.maxRunningPerPrincipal`
   * tasks running on any replica (the store counts them in PostgreSQL).
   */
  async start(args: StartTask): Promise<{ task: NeutralTask; done: Promise<NeutralTask> } | undefined> {
    const id = `a2a-${randomBytes(18).toString('base64url')}`;
    const task: NeutralTask = {
      id,
      contextId: args.contextId ?? `ctx-${randomBytes(12).toString('base64url')}`,
      skill: args.skill.id,
      state: 'working',
      timestamp: new Date().toISOString(),
      artifacts: [],
      history: [args.history],
    };
    if (!(await this.#store.create(args.owner, task, a2aLimits.maxRunningPerPrincipal))) return undefined;
    const controller = new AbortController();
    let reason: StopReason | undefined;
    const stop = (why: StopReason) => {
      if (controller.signal.aborted) return;
      reason = why;
      controller.abort();
    };
    const done = this.#run(args, task, controller.signal, () => reason);
    this.#running.set(id, { owner: args.owner, stop, done });
    const onDisconnect = () => stop('disconnected');
    if (args.connection?.aborted) stop('disconnected');
    else args.connection?.addEventListener('abort', onDisconnect, { once: true });
    const deadline = setTimeout(() => stop('deadline'), a2aLimits.taskDeadlineMs);
    const watch = setInterval(() => {
      this.#store.cancelRequested(id).then(
        (asked) => asked && stop('canceled'),
        () => undefined,
      );
    }, CANCEL_POLL_MS);
    void done.finally(() => {
      clearTimeout(deadline);
      clearInterval(watch);
      args.connection?.removeEventListener('abort', onDisconnect);
      this.#running.delete(id);
    });
    return { task, done };
  }

  async #run(args: StartTask, task: NeutralTask, signal: AbortSignal, reason: () => StopReason | undefined): Promise<NeutralTask> {
    let ending: Ending;
    try {
      ending = await this.#work(args, task, signal);
      if (signal.aborted) throw signal.reason;
    } catch (error) {
      const why = reason();
      if (why === 'canceled') return (await this.#store.get(args.owner, task.id)) ?? { ...task, state: 'canceled' };
      if (why === undefined) this.#log.error({ err: error, taskId: task.id, skill: args.skill.id }, 'a2a skill failed');
      const stopped = why ? STOPPED[why] : { state: 'failed' as const, text: 'The skill failed inside svc; send the message again.' };
      ending = { state: stopped.state, message: agentSays(task.id, stopped.state, stopped.text), artifacts: [] };
    }
    const ended = await this.#store.finish(args.owner, task.id, ending.state, ending.message, ending.artifacts);
    // A cancel that won the race stands: the stored task says so.
    if (!ended) return (await this.#store.get(args.owner, task.id)) ?? { ...task, state: 'canceled' };
    return { ...task, state: ending.state, statusMessage: ending.message, artifacts: ending.artifacts, timestamp: new Date().toISOString() };
  }

  /**
   * The skill's route, called as REST would be: read whole, or, for a streaming caller and a route
   * that streams, as its own event stream whose events are handed on as they come.
   */
  async #work(args: StartTask, task: NeutralTask, signal: AbortSignal): Promise<Ending> {
    const caller = { ...args.caller, signal };
    const body = args.input.body as Record<string, unknown> | undefined;
    if (args.onEvent && body && streamsEvents(args.skill.route)) {
      const answer = await this.#dispatch.call(args.skill.route, { ...args.input, body: { ...body, stream: true } }, caller, { stream: true });
      if (answer.status !== 200)
        return { state: 'failed', message: failureMessage(task.id, answer.status, JSON.parse(await readWhole(answer.stream!))), artifacts: [] };
      const read = await readRouteEvents(answer.stream!, args.onEvent);
      if (!read.ok) return { state: 'failed', message: failureMessage(task.id, 200, read.error as Record<string, unknown>), artifacts: [] };
      return { state: 'completed', artifacts: [resultArtifact(task.id, args.skill, read.json)] };
    }
    const answer = await this.#dispatch.call(args.skill.route, args.input, caller);
    if (answer.status >= 200 && answer.status < 300) return { state: 'completed', artifacts: [resultArtifact(task.id, args.skill, answer.json)] };
    return {
      state: 'failed',
      message: failureMessage(task.id, answer.status, (answer.json ?? { error: answer.text }) as Record<string, unknown>),
      artifacts: [],
    };
  }

  /** Cancels the owner's task on any replica; a task running here stops at once. Undefined: no such task. */
  async cancel(owner: string, id: string): Promise<NeutralTask | undefined> {
    const task = await this.#store.cancel(owner, id, agentSays(id, 'canceled', 'Canceled by the caller; its work was stopped.'));
    const local = this.#running.get(id);
    if (task?.state === 'canceled' && local?.owner === owner) {
      local.stop('canceled');
      await local.done;
    }
    return task;
  }

  /** Stops every running task (server shutdown) and waits for their rows to say so. */
  async close(): Promise<void> {
    const running = [...this.#running.values()];
    for (const entry of running) entry.stop('shutdown');
    await Promise.allSettled(running.map((entry) => entry.done));
  }
}
