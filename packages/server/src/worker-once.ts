import { Worker } from 'node:worker_threads';

/**
 * Runs a worker module once: it gets `input` as its `workerData`, posts one message, and its
 * thread ends. For one-time builds and loads (the discovery documents, x402's tables) that would
 * hold the event loop for hundreds of milliseconds on the main thread. Rejects, and stops the
 * thread, when the module fails to load or throws, exits without answering, or passes `deadlineMs`.
 */
export function runWorkerOnce<Result>(module: URL, input: unknown, deadlineMs: number): Promise<Result> {
  return new Promise<Result>((resolve, reject) => {
    const worker = new Worker(module, { workerData: input });
    // A build still running must not keep a process that is shutting down alive; a waiting reader's socket keeps it up.
    worker.unref();
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      outcome();
      void worker.terminate();
    };
    const deadline = setTimeout(() => settle(() => reject(new Error(`worker ${module.href} did not answer within ${deadlineMs} ms`))), deadlineMs);
    worker.once('message', (result: Result) => settle(() => resolve(result)));
    worker.once('error', (error: unknown) => settle(() => reject(error)));
    worker.once('exit', (code) => settle(() => reject(new Error(`worker ${module.href} exited (code ${code}) without answering`))));
  });
}
