import { MessageChannel, type Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { isServiceError, ServiceError } from '../../service-error.ts';
import { traceSettled } from '../../observability/tracing.ts';
import { workerModuleUrl } from '../../worker-modules.ts';
import { pageChannel, parseAnswer } from './page-channel.ts';
import { ParseDeadlines, WorkerStarts, type StopReason } from './parse-deadlines.ts';
import type { PdfConfig } from './pdf-config.ts';
import { StartBackoff } from './start-backoff.ts';
import { watchWorkerMemory } from './worker-memory-watchdog.ts';
import type { ParseTask, WorkerMessage, WorkerPage, WorkerSummary } from './worker/pdf-worker.ts';

const WORKER_FILE = workerModuleUrl('pdf-worker');
/** The key of the message a Piscina worker thread posts once its module has loaded (piscina/dist/common.js). */
const PISCINA_READY = '_WORKER_READY';

export interface ParseRequest {
  bytes: Uint8Array;
  password?: string;
  startPage: number;
  maxPages: number;
  maxChars: number;
  /** `docx` converts a DOCX to HTML in the worker instead of parsing a PDF. */
  format?: 'pdf' | 'docx';
}

/** Measured phases of one parse, in milliseconds (Server-Timing names). */
export interface ParseTimings {
  worker_start_ms: number;
  worker_queue_ms: number;
  worker_roundtrip_ms: number;
  executor_dispatch_ms: number;
}

/** One parse in flight: pages as the worker sends them, then the summary (or an error). */
export interface ParseRun {
  pages: AsyncIterable<WorkerPage>;
  /** Resolves after the last page with the summary; rejects with a ServiceError. */
  result: Promise<{ summary: WorkerSummary }>;
  /** Stops the parse (client gone): a running worker is terminated and replaced. */
  cancel(): void;
  /** The phases measured so far (also after a failure, for Server-Timing on error answers). */
  timings(): ParseTimings;
}

/** A place in the parser queue held before the bytes arrive; `release` answers whether it was still held. */
export interface PoolPlace {
  release(): boolean;
}

/**
 * The bounded PDF parser pool: Piscina with a fixed number of workers, each with a V8 memory
 * cap (`resourceLimits`), started by the first parse. Admission is counted here: `workers`
 * parses run, `maxPending` wait, anything more is refused at once (503 `pdf_queue_full`). A
 * waiting request's time while a worker is starting counts against the worker start deadline
 * (503 `pdf_worker_unavailable`), and its time waiting for a busy worker against the queue
 * deadline (503 `pdf_queue_timeout`); see parse-deadlines.ts. A worker that has not loaded its
 * module within the start deadline, or whose warm-up (loading the engine) takes longer, is
 * terminated and replaced. A worker whose module fails to load stops the pool: waiting requests
 * get 503 `pdf_worker_unavailable` at once, and so does every request until a back-off has passed
 * (start-backoff.ts). A parse past its deadline is aborted, which makes Piscina terminate that
 * worker and start a fresh one (504 `pdf_parse_timeout`). A worker that dies (out of memory,
 * crash) fails only its own request.
 */
export class ParserPool {
  /** Created by the first parse (see `startedPool`): until then no thread, engine or WASM heap exists. */
  private piscina: Piscina | undefined;
  private readonly config: PdfConfig;
  private readonly log: Logger;
  private readonly workerModule: URL;
  private inFlight = 0;
  /** Admitted parses a worker has begun (the rest of `inFlight` waits for one). */
  private running = 0;
  /** Places held by requests whose bytes are still arriving (`reserve`): they count against the queue. */
  private reserved = 0;
  /** Threads loading their module and warm-ups loading the engine (each under the start deadline). */
  private readonly starts = new WorkerStarts();
  private readonly watched = new WeakSet<Worker>();
  /**
   * Threads Piscina reported ready ('workerCreate'): one it started on its own may be ready before
   * the pool first sees it. (The first threads are reported at once, but are watched before that.)
   */
  private readonly reportedReady = new Set<number>();
  private readonly backoff = new StartBackoff();
  /** Runs no worker has begun yet, each told the reason when the pool they wait on is stopped. */
  private readonly waiting = new Set<(why: StopReason) => void>();
  /** A pool stopped because its workers could not load, until its threads are gone. */
  private retiring: Promise<void> | undefined;
  private closed = false;
  peakHeapBytes = 0;

  /** `workerModule` replaces worker/pdf-worker.ts for tests (TestSeams); production passes none. */
  constructor(config: PdfConfig, log: Logger, workerModule?: URL) {
    this.config = config;
    this.log = log;
    this.workerModule = workerModule ?? WORKER_FILE;
  }

  /**
   * The Piscina pool, started on the first parse rather than at boot: each worker is a V8
   * isolate with the engine's WASM heap (tens of MiB), which a server that never sees a PDF
   * should not carry. Starting it is what a request arriving during a worker replacement already
   * waits for: every worker boots and loads its engine (the warm-ups, under the start deadline),
   * and the request takes the first one free.
   */
  private startedPool(): Piscina {
    if (this.piscina) return this.piscina;
    if (this.closed) throw new Error('The PDF worker pool is closed.');
    const { config, log } = this;
    const memoryMb = Math.floor(config.workerMemoryBytes / (1024 * 1024));
    // pdf.js makes many short-lived objects: a young generation too small for them costs a third
    // of the throughput (measured: 64 MiB about 160 pages/s, 128 MiB about 250, over 2 workers).
    const youngMb = Math.min(128, Math.max(16, Math.floor(memoryMb / 6)));
    const pool = new Piscina({
      filename: this.workerModule.href,
      minThreads: config.workers,
      maxThreads: config.workers,
      // Admission is counted in run(); this only backs it up (warm-up tasks take queue slots too).
      maxQueue: config.maxPending + config.workers,
      concurrentTasksPerWorker: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
      // Young and old generation together stay under the cap; the watchdog acts first.
      resourceLimits: { maxOldGenerationSizeMb: Math.max(32, memoryMb - youngMb), maxYoungGenerationSizeMb: youngMb, stackSizeMb: 4 },
    });
    this.piscina = pool;
    for (let index = 0; index < config.workers; index += 1) {
      this.starts.begin();
      this.warmOne(pool);
    }
    this.watchStarts(pool);
    pool.on('workerCreate', (worker: { id: number }) => this.reportedReady.add(worker.id));
    pool.on('workerDestroy', (worker: { id: number }) => {
      this.reportedReady.delete(worker.id);
      if (this.closed || this.piscina !== pool) return;
      // Counted at once, so a request arriving before the replacement is up waits for its start.
      this.starts.begin();
      // Boot the replacement now rather than on the next request (after Piscina has removed
      // the destroyed worker, or the task would be handed to it).
      setImmediate(() => {
        if (this.closed || this.piscina !== pool) return this.starts.end();
        this.warmOne(pool);
        this.watchStarts(pool);
      });
    });
    pool.on('error', (error: unknown) => log.error({ err: error }, 'pdf worker pool error'));
    log.debug({ workers: config.workers, engine: config.engine }, 'pdf workers starting (first parse)');
    return pool;
  }

  /**
   * The worker start deadline, part one: a thread that has not loaded its module within it is
   * terminated; Piscina drops it and the next warm-up or request starts another. A thread whose
   * module throws while loading stops the pool (`failedToLoad`). Called whenever Piscina may have
   * added a thread.
   */
  private watchStarts(pool: Piscina): void {
    for (const thread of pool.threads) {
      if (this.watched.has(thread)) continue;
      this.watched.add(thread);
      if (this.reportedReady.has(thread.threadId)) continue;
      this.starts.begin();
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        this.starts.end();
        clearTimeout(deadline);
        thread.off('message', onMessage);
        thread.off('error', onError);
      };
      const onMessage = (message: unknown) => {
        if (typeof message !== 'object' || message === null || !(PISCINA_READY in message)) return;
        this.backoff.succeeded();
        settle();
      };
      const onError = (error: unknown) => {
        settle();
        this.failedToLoad(pool, error);
      };
      const deadline = setTimeout(() => {
        settle();
        if (this.closed) return;
        this.log.warn({ threadId: thread.threadId, deadlineMs: this.config.workerStartTimeoutMs }, 'pdf worker did not start within its deadline; terminated');
        thread.terminate().catch(() => {});
      }, this.config.workerStartTimeoutMs);
      deadline.unref();
      thread.on('message', onMessage);
      thread.once('error', onError);
      thread.once('exit', settle);
    }
  }

  /**
   * A thread's module threw while loading: the threads that replace it would do the same, each
   * within a few hundred milliseconds, for as long as requests come. So the pool stops: the
   * requests waiting for it get 503 `pdf_worker_unavailable` now (stopping Piscina rejects their
   * tasks), and so does every request until the back-off has passed; the first request after it
   * starts a new pool. A parse running on another thread fails too (503, retryable).
   */
  private failedToLoad(pool: Piscina, error: unknown): void {
    if (this.closed || this.piscina !== pool) return;
    const waitMs = this.backoff.failed();
    this.log.error({ err: error, retryInMs: Math.round(waitMs) }, 'pdf worker module failed to load; the pool is stopped until the back-off has passed');
    this.piscina = undefined;
    for (const giveUp of this.waiting) giveUp('unloadable');
    this.retiring = pool.destroy().catch((failure: unknown) => this.log.warn({ err: failure }, 'stopping the pdf worker pool failed'));
  }

  /**
   * Loads the engine in an idle worker so the first real request does not pay for it. The start
   * deadline, part two: a warm-up still running that long after it began is aborted, which makes
   * Piscina terminate its worker and start another. The caller has counted it in `starts`.
   */
  private warmOne(pool: Piscina): void {
    const { port1, port2 } = new MessageChannel();
    const abort = new AbortController();
    let deadline: NodeJS.Timeout | undefined;
    let settled = false;
    port1.on('message', (message: WorkerMessage) => {
      // `started` comes on this port, the task's end on Piscina's own: the two are not ordered,
      // so a warm-up may have ended before its `started` is read. A deadline armed then would
      // outlive it and, a start deadline later, log a termination that never happened.
      if (message.type !== 'started' || deadline || settled) return;
      deadline = setTimeout(() => {
        this.log.warn(
          { threadId: message.thread_id, deadlineMs: this.config.workerStartTimeoutMs },
          'pdf worker did not load its engine within the start deadline; terminated',
        );
        abort.abort('start');
      }, this.config.workerStartTimeoutMs);
    });
    const task: ParseTask = {
      bytes: new Uint8Array(0),
      engine: this.config.engine,
      startPage: 1,
      maxPages: 1,
      maxChars: 1,
      memoryLimitBytes: this.config.workerMemoryBytes,
      port: port2,
      warmup: true,
    };
    pool
      .run(task, { transferList: [port2] as never, signal: abort.signal })
      .catch(() => {})
      .finally(() => {
        settled = true;
        clearTimeout(deadline);
        this.starts.end();
        setImmediate(() => port1.close());
      });
  }

  get stats() {
    const pool = this.piscina;
    return {
      workers: this.config.workers,
      threads: pool?.threads.length ?? 0,
      in_flight: this.inFlight,
      running: this.running,
      starting: this.starts.starting,
      queued: pool?.queueSize ?? 0,
      completed: pool?.completed ?? 0,
      peak_heap_bytes: this.peakHeapBytes,
    };
  }

  /** Throws the answer for a request that cannot be admitted now: the workers cannot load, or the pool and its waiting room are full. */
  private admit(placed: boolean): void {
    if (!this.piscina && this.backoff.remainingMs() > 0) throw this.errorFor(undefined, 'unloadable', false);
    if (placed || this.inFlight + this.reserved < this.config.workers + this.config.maxPending) return;
    throw new ServiceError(
      'pdf_queue_full',
      `All ${this.config.workers} PDF workers are busy and ${this.config.maxPending} requests are already waiting; retry shortly.`,
      {
        retryAfterSeconds: 1,
        retryable: true,
      },
    );
  }

  /**
   * Holds a place in the queue before a request's bytes are read, so a full pool refuses an
   * upload before buffering it. `run` with the place takes it over; `release` (idempotent)
   * gives back a place never used. Throws 503 at once when there is none.
   */
  reserve(): PoolPlace {
    this.admit(false);
    this.reserved += 1;
    let held = true;
    return {
      release: () => {
        if (!held) return false;
        held = false;
        this.reserved -= 1;
        return true;
      },
    };
  }

  /** Admits a parse (on the place held for it, if any) or throws 503 at once when the workers and the waiting room are full. */
  run(request: ParseRequest, engine: PdfConfig['engine'], place?: PoolPlace): ParseRun {
    this.admit(place?.release() ?? false);
    this.inFlight += 1;
    const dispatchStarted = performance.now();
    const { port1, port2 } = new MessageChannel();
    const abort = new AbortController();
    const task: ParseTask = { ...request, engine, memoryLimitBytes: this.config.workerMemoryBytes, port: port2 };
    let pool: Piscina;
    let running: Promise<unknown>;
    try {
      pool = this.startedPool();
      running = pool.run(task, { transferList: [port2, ...movableBuffer(request.bytes)] as never, signal: abort.signal });
    } catch (error) {
      this.inFlight -= 1;
      port1.close();
      throw this.errorFor(error, undefined, false);
    }
    const executorDispatchMs = performance.now() - dispatchStarted;
    // Piscina may have started a thread for this task (the pool regrows on demand).
    this.watchStarts(pool);

    let reason: StopReason | undefined;
    let ended = false;
    const stop = (why: StopReason) => {
      if (reason || ended) return;
      reason = why;
      abort.abort(why);
    };
    const deadlines = new ParseDeadlines(this.config, this.starts, stop);
    // The pool is being stopped under this run: stopping it rejects the task, with this reason.
    const giveUp = (why: StopReason) => void (reason ??= why);
    this.waiting.add(giveUp);
    let startedAt: number | undefined;
    let watchdog: NodeJS.Timeout | undefined;
    const answer = parseAnswer(running, port1, (threadId, at) => {
      // A task stopped before its `started` was read (cancelled, timed out) has nothing left to watch.
      if (ended) return;
      if (startedAt === undefined) this.running += 1;
      startedAt = at;
      this.waiting.delete(giveUp);
      deadlines.began(at);
      watchdog = watchWorkerMemory(
        () => pool.threads.find((thread) => thread.threadId === threadId),
        this.config.workerMemoryBytes,
        () => stop('memory'),
      );
    });

    let summary: WorkerSummary | undefined;
    let endedAt: number | undefined;
    const result = answer
      .then(
        (value) => {
          summary = value;
          return { summary: value };
        },
        (error: unknown) => {
          throw isServiceError(error) ? error : this.errorFor(error, reason, startedAt !== undefined);
        },
      )
      .finally(() => {
        ended = true;
        endedAt = performance.now();
        deadlines.end();
        clearInterval(watchdog);
        this.waiting.delete(giveUp);
        this.inFlight -= 1;
        if (startedAt !== undefined) this.running -= 1;
        port1.close();
      });
    traceSettled('pdf.parse', dispatchStarted, result, { 'svc.pdf.engine': engine });
    const timings = (): ParseTimings => {
      const { startMs, queueMs } = deadlines.waited();
      const now = endedAt ?? performance.now();
      return {
        worker_start_ms: startMs + (summary?.engine_load_ms ?? 0),
        worker_queue_ms: queueMs,
        worker_roundtrip_ms: startedAt === undefined ? 0 : Math.max(0, now - startedAt),
        executor_dispatch_ms: executorDispatchMs,
      };
    };
    result.then(
      (value) => {
        this.peakHeapBytes = Math.max(this.peakHeapBytes, value.summary.peak_heap_bytes);
        this.log.debug(
          { pages: value.summary.pages_returned, peakHeapBytes: value.summary.peak_heap_bytes, roundtripMs: Math.round(timings().worker_roundtrip_ms) },
          'pdf parsed',
        );
      },
      () => {},
    );
    return { pages: pageChannel(port1, result), result, cancel: () => stop('cancel'), timings };
  }

  /** A worker that passed its memory cap (the watchdog's or V8's own): the document is too complex for it. */
  private tooComplex(): ServiceError {
    return new ServiceError('pdf_too_complex', `Extracting this document needs more than the ${this.config.workerMemoryBytes} bytes a parser worker may use.`, {
      retryable: false,
    });
  }

  /** `began`: the worker had started the task (else it died before, still loading). */
  private errorFor(error: unknown, reason: StopReason | undefined, began: boolean): ServiceError {
    if (reason === 'queue') {
      return new ServiceError('pdf_queue_timeout', `No PDF worker became free within ${this.config.queueTimeoutMs / 1000} s; retry shortly.`, {
        retryAfterSeconds: 1,
        retryable: true,
      });
    }
    if (reason === 'start') {
      return new ServiceError('pdf_worker_unavailable', `No PDF worker started within ${this.config.workerStartTimeoutMs / 1000} s.`, {
        retryAfterSeconds: 5,
        retryable: true,
      });
    }
    if (reason === 'unloadable') {
      const seconds = Math.max(1, Math.ceil(this.backoff.remainingMs() / 1000));
      return new ServiceError(
        'pdf_worker_unavailable',
        `The PDF workers cannot start: their module fails to load (the server log says why). Retry in ${seconds} s.`,
        { retryAfterSeconds: seconds, retryable: true },
      );
    }
    if (reason === 'parse') {
      this.log.warn('pdf parse deadline passed; worker terminated and replaced');
      return new ServiceError(
        'pdf_parse_timeout',
        `Parsing did not finish within ${this.config.parseTimeoutMs / 1000} s; the parse was stopped. Ask for fewer pages or a smaller file.`,
        { retryable: false },
      );
    }
    if (reason === 'memory') {
      this.log.warn('pdf worker passed its memory cap; terminated and replaced');
      return this.tooComplex();
    }
    if (reason === 'cancel') return new ServiceError('bad_request', 'The client went away; the parse was stopped.');
    const code = (error as { code?: string }).code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
      this.log.warn('pdf worker ran out of memory; replaced');
      return this.tooComplex();
    }
    if (/queue is at limit|no task queue/i.test((error as Error).message ?? '')) {
      return new ServiceError('pdf_queue_full', 'All PDF workers are busy and the waiting room is full; retry shortly.', {
        retryAfterSeconds: 1,
        retryable: true,
      });
    }
    // Handed to a worker that died before running it: the start deadline ended it (or it crashed loading).
    if (!began) return this.errorFor(error, 'start', true);
    this.log.error({ err: error }, 'pdf worker failed');
    return new ServiceError('pdf_worker_unavailable', 'The PDF worker stopped unexpectedly; retry.', { retryable: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([this.piscina?.destroy(), this.retiring]);
  }
}

/** The request's bytes move to the worker instead of being copied, when they fill a buffer of their own. */
function movableBuffer(bytes: Uint8Array): ArrayBuffer[] {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer ? [bytes.buffer] : [];
}
