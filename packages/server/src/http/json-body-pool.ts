import { lazyWorkerPool, outOfMemory } from '../lazy-worker-pool.ts';
import { ServiceError } from '../service-error.ts';
import type { JsonBodyOutcome, JsonBodyTask } from './json-body-worker.ts';

/** A body at the largest cap (about 22 MiB) parsed into the densest value (`[{},{},...]`) takes about 300 MiB. */
const WORKER_HEAP_MB = 768;
/** A cold thread's start and a 22 MiB parse take well under a second; past this the machine is overloaded. */
export const JSON_BODY_DEADLINE_MS = 30_000;
/** Bodies past the first wait their turn in the pool's queue; the body budget (body-budget.ts) bounds the bytes held meanwhile. */
const startedPool = lazyWorkerPool('json-body-worker', { heapMb: WORKER_HEAP_MB, idleMs: 30_000 });

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
    if (outOfMemory(error))
      throw new ServiceError('payload_too_large', `The JSON body needs more than ${WORKER_HEAP_MB} MiB to parse; send a smaller or flatter one.`, {
        cause: error,
      });
    const why = deadline.aborted ? `within ${JSON_BODY_DEADLINE_MS / 1000} s` : 'because its parser thread failed';
    throw new ServiceError('service_unavailable', `The JSON body could not be parsed ${why}; retry.`, { retryable: true, cause: error });
  }
  if ('refusal' in outcome) {
    const { code, message, detail } = outcome.refusal;
    throw new ServiceError(code, message, { detail });
  }
  return outcome.value;
}
