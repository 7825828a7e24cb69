import { a2aLimits } from '@svc/schemas';
import type { TaskRow, TaskStatus } from '../tasks/index.ts';
import type { NeutralArtifact, NeutralMessage, NeutralTask, TaskState } from './a2a-wire.ts';

/** The task kind of an A2A skill in the durable task store (docs/tasks.md). */
export const A2A_KIND = 'a2a.skill';

/** What an A2A task keeps as its input: what every read renders besides how it ended. */
export interface A2aTaskInput {
  contextId: string;
  skill: string;
  history: NeutralMessage[];
}

/** What an ended A2A task keeps as its result: its final status message and artifacts. */
export interface A2aTaskResult {
  statusMessage?: NeutralMessage | undefined;
  artifacts: NeutralArtifact[];
}

const STATES: Record<TaskStatus, TaskState> = {
  queued: 'submitted',
  in_progress: 'working',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'canceled',
  incomplete: 'failed',
};

const agentSays = (taskId: string, suffix: string, text: string): NeutralMessage => ({ messageId: `${taskId}-${suffix}`, role: 'agent', parts: [{ text }] });

export const CANCELED_BY_CALLER = (taskId: string) => agentSays(taskId, 'canceled', 'Canceled by the caller; its work was stopped.');

/**
 * A task of the store as A2A reads it (protocol-neutral; a2a-wire.ts renders 0.3 or 1.0). A
 * running task asked to cancel reads `canceled` at once on every replica, as before the store:
 * its runner stops when it hears it. A task the store ended without the skill's own word (its
 * runner lost or stopped) says why in its status message.
 */
export function taskOf(row: TaskRow): NeutralTask {
  const input = row.input as A2aTaskInput;
  const result = row.result as A2aTaskResult | null;
  const cancelAsked = row.cancel_requested && (row.status === 'queued' || row.status === 'in_progress');
  const state = cancelAsked ? 'canceled' : STATES[row.status];
  const statusMessage =
    result?.statusMessage ??
    (cancelAsked || row.status === 'cancelled'
      ? CANCELED_BY_CALLER(row.id)
      : row.error_message
        ? agentSays(row.id, state, `${row.error_message} Send the message again.`)
        : undefined);
  return {
    id: row.id,
    contextId: input.contextId,
    skill: input.skill,
    state,
    statusMessage,
    timestamp: new Date(row.finished_at ?? row.started_at ?? row.created_at).toISOString(),
    artifacts: result?.artifacts ?? [],
    history: input.history,
  };
}

/** What a finished task keeps: bounded, so one huge answer cannot fill the table (the caller got it whole). */
export function storable(artifacts: NeutralArtifact[]): NeutralArtifact[] {
  const bytes = Buffer.byteLength(JSON.stringify(artifacts));
  if (bytes <= a2aLimits.maxStoredResultBytes) return artifacts;
  return artifacts.map((artifact) => ({
    ...artifact,
    parts: [{ text: `The answer was ${bytes} bytes, over the ${a2aLimits.maxStoredResultBytes} a stored task keeps; it was sent whole when the task ran.` }],
  }));
}
