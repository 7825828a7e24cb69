import { on } from 'node:events';
import type { MessagePort } from 'node:worker_threads';
import { ServiceError } from '../../service-error.ts';
import type { WorkerMessage, WorkerPage, WorkerSummary } from './worker/pdf-worker.ts';

/** How long the worker's last message may trail its task's answer before the parse counts as unanswered. */
const LAST_MESSAGE_GRACE_MS = 5_000;

/**
 * The pages of one parse, in the order the worker posts them on the task's port. `events.on`
 * listens from this call (not from the first read) and buffers what arrives before the reader
 * asks, so no page is lost to a slow reader. The channel ends at the worker's last message
 * ('done' or 'failed'), or when the port closes (the parse was stopped); then it ends as the
 * parse did: `outcome`'s failure is thrown.
 */
export function pageChannel(port: MessagePort, outcome: Promise<unknown>): AsyncGenerator<WorkerPage> {
  return pagesOf(on(port, 'message', { close: ['close'] }) as AsyncIterableIterator<[WorkerMessage]>, outcome);
}

async function* pagesOf(messages: AsyncIterableIterator<[WorkerMessage]>, outcome: Promise<unknown>): AsyncGenerator<WorkerPage> {
  for await (const [message] of messages) {
    if (message.type === 'page') yield message.page;
    else if (message.type === 'done' || message.type === 'failed') break;
  }
  await outcome;
}

/**
 * The answer of one parse. The worker's last message on the task's port ('done' or 'failed') and
 * Piscina's answer to the task come over two channels, with no order between them: on a busy
 * machine the task's answer can land first. So the parse ends when both have come; the port's
 * message is awaited for a while after the task's answer, never judged by one turn of the event
 * loop. Resolves with the summary; rejects with the worker's refusal (a ServiceError), a missing
 * last message (503 `pdf_worker_unavailable`), or the task's own error as Piscina gave it.
 * `started` is called when the worker's word that it began the task arrives, with its thread id
 * and when it began (on this thread's `performance.now()` clock: a busy event loop reads the
 * message late, and the parse's round trip counts from the worker's own stamp).
 */
export function parseAnswer(task: Promise<unknown>, port: MessagePort, started: (threadId: number, at: number) => void): Promise<WorkerSummary> {
  return new Promise<WorkerSummary>((resolve, reject) => {
    let summary: WorkerSummary | undefined;
    let refusal: ServiceError | undefined;
    let taskEnded = false;
    let lateMessage: NodeJS.Timeout | undefined;
    const settle = () => {
      if (!taskEnded || !(summary || refusal)) return;
      clearTimeout(lateMessage);
      if (refusal) reject(refusal);
      else resolve(summary!);
    };
    port.on('message', (message: WorkerMessage) => {
      if (message.type === 'started') started(message.thread_id, Math.min(performance.now(), message.at - performance.timeOrigin));
      if (message.type === 'done') summary = message.summary;
      if (message.type === 'failed') refusal = new ServiceError(message.code, message.message, { retryable: false });
      settle();
    });
    task.then(
      () => {
        taskEnded = true;
        settle();
        if (!summary && !refusal)
          lateMessage = setTimeout(
            () => reject(new ServiceError('pdf_worker_unavailable', 'The PDF worker ended without an answer.', { retryable: true })),
            LAST_MESSAGE_GRACE_MS,
          );
      },
      (error: unknown) => {
        clearTimeout(lateMessage);
        reject(error);
      },
    );
  });
}
