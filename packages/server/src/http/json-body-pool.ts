import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { ServiceError } from '../service-error.ts';
import { workerModuleUrl } from '../worker-modules.ts';
import type { JsonBodyOutcome, JsonBodyTask } from './json-body-worker.ts';

/**
 * Threads that parse large JSON bodies. One on a 2-core machine, so the other core stays with
 * the event loop; bodies past the first wait their turn in Piscina's queue (the body budget,
 * body-budget.ts, already bounds how many bytes are held at once).
 */
const THREADS = Math.max(1, Math.min(2, availableParallelism() - 1));
/** A body at the largest cap (about 22 MiB) parsed into the densest value (`[{},{},...]`) takes about 300 MiB. */
const WORKER_HEAP_MB = 768;
/** A thread stays a while for the next large body, then goes (Piscina unrefs idle threads). */
const IDLE_MS = 30_000;
/** A cold thread's start and a 22 MiB parse take well under a second; past this the machine is overloaded. */
export const JSON_BODY_DEADLINE_MS = 30_000;

let pool: Piscina | undefined;

/** The pool, started with the first large body: a server that never sees one carries no thread. */
function startedPool(): Piscina {
  if (pool) return pool;
  const started = new Piscina({
    filename: workerModuleUrl('json-body-worker').href,
    minThreads: 0,
    maxThreads: THREADS,
    idleTimeout: IDLE_MS,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, stackSizeMb: 4 },
  });
  // A thread that dies outside a task (its module does not load): the bodies queued would wait
  // for nothing, so the pool goes (they fail with 503) and the next large body starts another.
  started.on('error', () => {
    if (pool === started) pool = undefined;
    started.destroy().catch(() => {});
  });
  pool = started;
  return started;
}

/**
 * Parses a large JSON body in a worker thread: its bytes are moved there, not copied, and only
 * the parsed value comes back (its structured clone costs the event loop one copy of the value,
 * where decoding and parsing here cost two allocations of the body's size and the parse).
 * The refusals are the ones a small body gets on the main thread.
 */
export async function parseJsonOffThread(bytes: ArrayBuffer, mayHoldUnstorable: boolean): Promise<unknown> {
  const task: JsonBodyTask = { bytes, mayHoldUnstorable };
  let outcome: JsonBodyOutcome;
  const deadline = AbortSignal.timeout(JSON_BODY_DEADLINE_MS);
  try {
    outcome = (await startedPool().run(task, { transferList: [bytes], signal: deadline })) as JsonBodyOutcome;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY')
      throw new ServiceError('payload_too_large', `The JSON body needs more than ${WORKER_HEAP_MB} MiB to parse; send a smaller or flatter one.`, {
        cause: error,
      });
    const why = deadline.aborted ? `within ${JSON_BODY_DEADLINE_MS / 1000} s` : 'because its parser thread failed';
    throw new ServiceError('service_unavailable', `The JSON body could not be parsed ${why}; retry.`, { retryable: true, cause: error });
  }
  if ('refusal' in outcome) {
    const { code, message, detail } = outcome.refusal;
    throw new ServiceError(code, message, { detail: detail as ServiceError['detail'] });
  }
  return outcome.value;
}
