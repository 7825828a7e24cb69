import { Piscina } from 'piscina';
import { MessageChannel } from 'node:worker_threads';
import type { Logger } from 'pino';
import { jobLimits, type CalculateResult, type ValidateJsonResult } from '@svc/schemas';
import { ServiceError } from '../../../service-error.ts';
import { workerModuleUrl } from '../../../worker-modules.ts';
import type { CalculateTask, JobOperationOutcome, JobOperationTask, ValidateJsonTask } from './job-operations-worker.ts';

const WORKER_FILE = workerModuleUrl('job-operations-worker');
/** As many as a process runs jobs by default (SVC_JOBS_WORKERS): more items wait their turn below. */
const THREADS = 2;
/** Enough for ajv or mathjs, a compiled schema at the contract's size and its errors; an exponential schema's error list stops here. */
const WORKER_HEAP_MB = 192;
/** A thread that has loaded ajv or mathjs is kept a while for the next item, then let go (Piscina unrefs idle threads). */
const IDLE_MS = 60_000;
/** How long a thread may take to start and load ajv or mathjs before the item's own deadline begins (as the PDF pool's worker start). */
const START_DEADLINE_MS = 30_000;

/** One shared pool per worker module (only tests name another), started on the first validate_json or calculate item. */
const pools = new Map<string, Piscina>();

function startedPool(workerModule: URL, log: Logger): Piscina {
  const filename = workerModule.href;
  const existing = pools.get(filename);
  if (existing) return existing;
  const pool = new Piscina({
    filename,
    minThreads: 0,
    maxThreads: THREADS,
    idleTimeout: IDLE_MS,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, stackSizeMb: 4 },
  });
  // A thread that dies outside a task (its module does not load) is reported here, and an
  // 'error' nobody hears ends the process. Piscina starts no thread after a failed start, so the
  // items queued would wait for nothing: the pool goes (they fail) and the next item starts anew.
  pool.on('error', (error: unknown) => {
    log.error({ err: error, workerModule: filename }, 'job operations worker failed outside a task; its pool is stopped');
    if (pools.get(filename) === pool) pools.delete(filename);
    pool.destroy().catch((failure: unknown) => log.warn({ err: failure }, 'stopping the failed job operations pool failed'));
  });
  pools.set(filename, pool);
  return pool;
}

/**
 * Items take a thread in turn here rather than in Piscina's queue, so an item's deadline counts
 * from when it starts running: one costly item must not time out the ones queued behind it.
 */
let running = 0;
const waiting: Array<() => void> = [];

async function takeTurn(signal?: AbortSignal): Promise<void> {
  if (running < THREADS) {
    running += 1;
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const start = () => {
      signal?.removeEventListener('abort', leave);
      running += 1;
      resolve();
    };
    const leave = () => {
      waiting.splice(waiting.indexOf(start), 1);
      reject(signal!.reason);
    };
    waiting.push(start);
    signal?.addEventListener('abort', leave, { once: true });
  });
}

function endTurn(): void {
  running -= 1;
  waiting.shift()?.();
}

/** What each operation may cost in its thread, and the item error past it. */
const bounds = {
  validate_json: {
    deadlineMs: jobLimits.validateJsonDeadlineMs,
    tooCostly: (why: string) =>
      new ServiceError(
        'json_validation_too_costly',
        `Validating this document against this schema ${why}; validation runs under a ${jobLimits.validateJsonDeadlineMs} ms deadline and a ${WORKER_HEAP_MB} MiB heap. Simplify the schema (nested anyOf/oneOf through $ref, uniqueItems over large arrays, many patternProperties over many keys) or the document.`,
      ),
  },
  calculate: {
    deadlineMs: jobLimits.calculateDeadlineMs,
    tooCostly: (why: string) =>
      new ServiceError(
        'calculate_too_costly',
        `Evaluating this expression ${why}; a calculation runs under a ${jobLimits.calculateDeadlineMs} ms deadline and a ${WORKER_HEAP_MB} MiB heap.`,
      ),
  },
} as const;

interface RunOptions {
  signal?: AbortSignal;
  log: Logger;
  workerModule?: URL | undefined;
}

/**
 * Runs one item in the job operations worker under its operation's deadline; past it, or past
 * the heap cap, the thread is terminated and the item fails with the operation's too-costly
 * code. The job's own signal (cancel, lease lost) ends it too.
 */
async function runOffThread<Result>(task: ValidateJsonTask | CalculateTask, options: RunOptions): Promise<Result> {
  const { signal, log } = options;
  const { deadlineMs, tooCostly } = bounds[task.operation];
  await takeTurn(signal);
  let outcome: JobOperationOutcome<Result>;
  // Two deadlines in turn: the thread's start (a cold thread loads ajv or mathjs, seconds on a
  // loaded machine), then the item's own from the worker's 'start'. One deadline over both timed
  // out cheap items whose thread was still starting.
  const stop = new AbortController();
  const { port1: startedHere, port2: startedThere } = new MessageChannel();
  let itemRunning = false;
  let itemTimer: NodeJS.Timeout | undefined;
  const startTimer = setTimeout(() => stop.abort(), START_DEADLINE_MS);
  startedHere.once('message', () => {
    itemRunning = true;
    clearTimeout(startTimer);
    itemTimer = setTimeout(() => stop.abort(), deadlineMs);
  });
  try {
    outcome = (await startedPool(options.workerModule ?? WORKER_FILE, log).run(
      { ...task, started: startedThere },
      { signal: signal ? AbortSignal.any([signal, stop.signal]) : stop.signal, transferList: [startedThere] },
    )) as JobOperationOutcome<Result>;
  } catch (error) {
    if (signal?.aborted) throw error;
    if (stop.signal.aborted && itemRunning) throw tooCostly(`took longer than ${deadlineMs} ms`);
    if (stop.signal.aborted)
      throw new ServiceError('job_worker_unavailable', `No job operations worker started within ${START_DEADLINE_MS / 1000} s; retry the item.`);
    if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw tooCostly('ran out of memory');
    throw error;
  } finally {
    clearTimeout(startTimer);
    clearTimeout(itemTimer);
    startedHere.close();
    endTurn();
  }
  if ('error' in outcome) throw new ServiceError(outcome.error.code as 'json_schema_invalid', outcome.error.message);
  return outcome.result;
}

/**
 * validate_json off the event loop: ajv's compile grows with the schema (3.3 s for 10,000
 * properties, which fit in a 512 KiB request), and applying a schema can take exponential time
 * (`anyOf` of two `$ref`s, chained) or quadratic (`uniqueItems` over arrays).
 */
export function validateJsonOffThread(task: Omit<ValidateJsonTask, 'operation'>, options: RunOptions): Promise<ValidateJsonResult> {
  return runOffThread({ operation: 'validate_json', ...task }, options);
}

/** calculate off the event loop: its first item in a thread loads mathjs, which held the event loop 1.2-1.8 s. */
export function calculateOffThread(expression: string, options: RunOptions): Promise<CalculateResult> {
  return runOffThread({ operation: 'calculate', expression }, options);
}

/** When a thread was last asked to load mathjs; an idle thread is let go after IDLE_MS, so a warm older than that may be gone. */
let lastWarmed = Number.NEGATIVE_INFINITY;

/**
 * Loads mathjs in a worker thread when a calculate job is submitted, so the load happens while
 * the job waits in the queue; at most one per idle period. It takes a turn like an item: in
 * Piscina's queue behind it, an item's deadline would tick while mathjs loads.
 */
export function warmCalculator(options: { log: Logger; workerModule?: URL | undefined }): void {
  const now = Date.now();
  if (now - lastWarmed < IDLE_MS) return;
  lastWarmed = now;
  const task: JobOperationTask = { operation: 'warm_calculator' };
  const warm = async () => {
    await takeTurn();
    try {
      await startedPool(options.workerModule ?? WORKER_FILE, options.log).run(task, { signal: AbortSignal.timeout(START_DEADLINE_MS) });
    } finally {
      endTurn();
    }
  };
  warm().catch((error: unknown) => {
    lastWarmed = Number.NEGATIVE_INFINITY;
    options.log.warn({ err: error }, 'loading the calculator in a job operations worker failed');
  });
}
