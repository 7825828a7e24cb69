import type { ResponseObject, ResponseStreamEvent, SseMessage } from '@svc/schemas';
import type { Transaction } from 'sequelize';
import { ENDED, type TaskEnd, type TaskRow, type TaskRun, type Tasks } from '../tasks/index.ts';
import { responseNotFound } from './response-store.ts';

/** The task kind of a background response (docs/tasks.md). */
export const BACKGROUND_KIND = 'responses.background';
/** How long a cancel waits for the runner (on any replica) to stop before answering the response as it is then. */
const CANCEL_WAIT_MS = 5_000;
/** Events a run emits before it waits for them to be stored. */
const EMIT_BACKLOG = 256;

type Events = AsyncIterable<SseMessage<ResponseStreamEvent>>;

/**
 * What the task keeps: the response as first answered (`input`), and as it ended (`result`); the
 * developer key that made it, whose webhook endpoint announces its end (whichever replica ends it).
 */
interface BackgroundInput {
  response: ResponseObject;
  credential_id?: string;
}

const background = (response: ResponseObject): ResponseObject => ({ ...response, background: true });

/**
 * Starts a background response: a task of the store, run here (it needs this request's context:
 * the principal, the key its usage counts to), read, followed and cancelled from any replica.
 * `events` makes the response's stream (the foreground's own, with `stream: true`); every event is
 * kept, numbered `sequence_number + 1`, before anyone is sent it. Answers the task at once.
 */
export async function startBackground(
  tasks: Tasks,
  task: {
    id: string;
    owner: string;
    credentialId: string | undefined;
    initial: ResponseObject;
    ended: (status: TaskEnd['status'], transaction?: Transaction) => Promise<void>;
  },
  events: (signal: AbortSignal) => Promise<Events>,
): Promise<{ row: TaskRow; ended: Promise<void> }> {
  const input: BackgroundInput = { response: background(task.initial), ...(task.credentialId ? { credential_id: task.credentialId } : {}) };
  return tasks.runHere({ id: task.id, owner: task.owner, kind: BACKGROUND_KIND, input }, async (run): Promise<TaskEnd> => {
    let end: TaskEnd;
    try {
      end = await runBackground(run, input, events);
    } catch (error) {
      // A run that threw is ended by the runner from the error; announced here, just before.
      await task.ended(run.signal.reason === 'cancelled' ? 'cancelled' : 'failed').catch(() => {});
      throw error;
    }
    // How it ended is announced (webhooks) in the transaction that stores the end, with the status
    // stored: a receiver that reads the response when the webhook arrives finds it ended.
    return { ...end, announce: (status, transaction) => task.ended(status, transaction) };
  });
}

async function runBackground({ signal, emit }: TaskRun, input: BackgroundInput, events: (signal: AbortSignal) => Promise<Events>): Promise<TaskEnd> {
  {
    let last: ResponseObject = { ...input.response, status: 'in_progress' };
    const stream = await events(signal);
    // Events are not awaited one by one: those emitted while a write is in flight go in the next
    // write together (the runner stores them all before the task ends). Every EMIT_BACKLOG events
    // the run waits for them, so a model faster than the database holds a bounded backlog.
    let backlog: Promise<number | undefined>[] = [];
    for await (const message of stream) {
      const event = message.data as ResponseStreamEvent & { response?: ResponseObject };
      if (event.response) {
        last = background(event.response);
        backlog.push(emit(event.type, { ...event, response: last }));
      } else backlog.push(emit(event.type, event));
      if (backlog.length >= EMIT_BACKLOG) {
        await Promise.all(backlog);
        backlog = [];
      }
      if (signal.aborted) break;
    }
    await Promise.all(backlog);
    if (signal.aborted && signal.reason === 'cancelled') return { status: 'cancelled', result: { ...last, status: 'cancelled' } };
    if (last.status === 'completed') return { status: 'completed', result: last };
    if (last.status === 'incomplete') return { status: 'incomplete', result: last };
    const error = last.error ?? { code: 'response_failed', message: 'The response ended without its final event.' };
    return { status: 'failed', result: { ...last, status: 'failed', error }, code: error.code, message: error.message };
  }
}

/** The response of a background task as it is now: as it ended, or as first answered with the task's status. */
export function responseOfTask(task: TaskRow): ResponseObject {
  if (task.result) return task.result as ResponseObject;
  const { response } = task.input as BackgroundInput;
  const error = task.error_code ? { code: task.error_code, message: task.error_message ?? '' } : response.error;
  return { ...response, status: task.status, error };
}

/** The developer key that made a background response (none: another credential). */
export const credentialOfTask = (task: TaskRow): string | undefined => (task.input as BackgroundInput).credential_id;

/** The task of a background response, for its owner; undefined when the id is not one (a foreground response, or another's). */
export async function backgroundTask(tasks: Tasks, id: string, owner: string): Promise<TaskRow | undefined> {
  const task = await tasks.get(id, owner);
  return task?.kind === BACKGROUND_KIND ? task : undefined;
}

/** The events after `startingAfter` (a sequence number; -1 or absent: from the first), until the last. */
export async function followBackground(tasks: Tasks, id: string, owner: string, startingAfter: number | undefined, signal: AbortSignal): Promise<Events> {
  // A foreground response has no events: as unknown as another's (no probing which ids exist).
  if (!(await backgroundTask(tasks, id, owner))) throw responseNotFound(id);
  const events = await tasks.follow(id, owner, (startingAfter ?? -1) + 1, signal);
  if (!events) throw responseNotFound(id);
  return (async function* () {
    for await (const event of events) yield { event: event.type, data: event.data as ResponseStreamEvent };
  })();
}

/** Cancels a background response from any replica; answers it once its runner stopped (or as it is after a short wait). */
export async function cancelBackground(tasks: Tasks, id: string, owner: string, signal: AbortSignal): Promise<ResponseObject> {
  if (!(await backgroundTask(tasks, id, owner))) throw responseNotFound(id);
  const watch = tasks.watch(id);
  try {
    let task = await tasks.cancel(id, owner);
    const deadline = Date.now() + CANCEL_WAIT_MS;
    while (task && !ENDED.includes(task.status) && Date.now() < deadline && !signal.aborted) {
      await watch.wait(AbortSignal.any([signal, AbortSignal.timeout(Math.max(1, deadline - Date.now()))]));
      task = await tasks.get(id, owner);
    }
    if (!task) throw responseNotFound(id);
    return responseOfTask(task);
  } finally {
    watch.close();
  }
}
