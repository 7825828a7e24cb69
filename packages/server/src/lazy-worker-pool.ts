import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { type WorkerModuleName, workerModuleUrl } from './worker-modules.ts';

/**
 * Threads for request work moved off the event loop (a large JSON body's parse, a large
 * document's sections): one on a 2-core machine, so the other core stays with the event loop.
 */
export const REQUEST_WORKER_THREADS = Math.max(1, Math.min(2, availableParallelism() - 1));

/**
 * A Piscina pool of a worker module, started on its first use: a server that never needs it
 * carries no thread, and an idle thread goes after `idleMs` (Piscina unrefs idle threads). A
 * thread that dies outside a task (its module does not load) stops the pool, since the tasks
 * queued would wait for nothing; they fail, and the next use starts a new pool.
 */
export function lazyWorkerPool(module: WorkerModuleName, options: { heapMb: number; idleMs: number }): () => Piscina {
  let pool: Piscina | undefined;
  return () => {
    if (pool) return pool;
    const started = new Piscina({
      filename: workerModuleUrl(module).href,
      minThreads: 0,
      maxThreads: REQUEST_WORKER_THREADS,
      idleTimeout: options.idleMs,
      resourceLimits: { maxOldGenerationSizeMb: options.heapMb, stackSizeMb: 4 },
    });
    started.on('error', () => {
      if (pool === started) pool = undefined;
      started.destroy().catch(() => {});
    });
    pool = started;
    return started;
  };
}

/** Whether a task failed because its thread passed the pool's heap cap. */
export const outOfMemory = (error: unknown) => (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
