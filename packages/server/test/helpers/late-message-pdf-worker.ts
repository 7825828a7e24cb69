import type { MessagePort } from 'node:worker_threads';
import type { ParseTask, WorkerMessage } from '../../src/features/pdf/worker/pdf-worker.ts';

/**
 * The real PDF parser worker (TestSeams.pdfWorkerModule) whose last message of a parse ('done'
 * or 'failed') reaches the server LATE_MS after the task has answered. On a busy machine the
 * task's answer (Piscina's channel) and the worker's messages (the task's own port) arrive in
 * either order; this makes the order that once lost answers happen every time. The test sets
 * PISCINA_ENABLE_ASYNC_ATOMICS=1, so the worker's timers run between tasks (Piscina's default
 * parks an idle worker's thread, and the late message would wait for the next task).
 */
const LATE_MS = 300;
const real = await import('../../src/features/pdf/worker/pdf-worker.ts');

export default async function lateMessagePdfWorker(task: ParseTask): Promise<boolean> {
  const port = task.port as MessagePort;
  const post = port.postMessage.bind(port);
  const close = port.close.bind(port);
  port.postMessage = (message: WorkerMessage) => {
    if (message.type === 'done' || message.type === 'failed') setTimeout(() => post(message), LATE_MS);
    else post(message);
  };
  // The real worker closes its port as its task ends; the late message must still go out first.
  port.close = () => setTimeout(close, LATE_MS + 50);
  return real.default(task);
}
