import { MessageChannel, type Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { ServiceError } from '../../service-error.ts';
import type { PdfConfig } from './pdf-config.ts';
import { workerModuleUrl } from '../../worker-modules.ts';
import type { ParseTask, WorkerMessage, WorkerPage, WorkerSummary } from './worker/pdf-worker.ts';

type StopReason = 'queue' | 'start' | 'parse' | 'cancel' | 'memory';
interface HeapInfo {
  used_heap_size: number;
  external_memory: number;
}
const WATCHDOG_FRACTION = 0.75;
const WATCHDOG_INTERVAL_MS = 20;
/** How long the worker's last message may trail its task's answer before the parse counts as unanswered. */
const LAST_MESSAGE_GRACE_MS = 5_000;

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
 * waiting request gives up after the queue timeout (503 `pdf_queue_timeout`), or, when a worker
 * is still starting at that point, the worker start deadline (503 `pdf_worker_unavailable`). A
 * worker that has not loaded its module within the start deadline, or whose warm-up (loading the
 * engine) takes longer, is terminated and replaced. A parse past its deadline is aborted, which
 * makes Piscina terminate that worker and start a fresh one (504 `pdf_parse_timeout`). A worker
 * that dies (out of memory, crash) fails only its own request.
 */
export class ParserPool {
  /** Created by the first parse (see `startedPool`): until then no thread, engine or WASM heap exists. */
  private piscina: Piscina | undefined;
  private readonly config: PdfConfig;
  private readonly log: Logger;
  private readonly workerModule: URL;
  private inFlight = 0;
  /** Places held by requests whose bytes are still arriving (`reserve`): they count against the queue. */
  private reserved = 0;
  /** Threads that have not loaded their module yet (each watched by the start deadline). */
  private unready = 0;
  private readonly watched = new WeakSet<Worker>();
  /**
   * Threads Piscina reported ready ('workerCreate'): one it started on its own may be ready before
   * the pool first sees it. (The first threads are reported at once, but are watched before that.)
   */
  private readonly reportedReady = new Set<number>();
  /** Warm-ups submitted and not finished: the engine is still loading somewhere. */
  private warming = 0;
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
      // Young and old generation together stay under the cap; the watchdog below acts first.
      resourceLimits: { maxOldGenerationSizeMb: Math.max(32, memoryMb - youngMb), maxYoungGenerationSizeMb: youngMb, stackSizeMb: 4 },
    });
    this.piscina = pool;
    this.warming = config.workers;
    for (let index = 0; index < config.workers; index += 1) this.warmOne();
    this.watchStarts();
    pool.on('workerCreate', (worker: { id: number }) => this.reportedReady.add(worker.id));
    pool.on('workerDestroy', (worker: { id: number }) => {
      this.reportedReady.delete(worker.id);
      if (this.closed) return;
      // Counted at once, so a request arriving before the replacement is up waits for its start.
      this.warming += 1;
      // Boot the replacement now rather than on the next request (after Piscina has removed
      // the destroyed worker, or the task would be handed to it).
      setImmediate(() => {
        if (this.closed) return;
        this.warmOne();
        this.watchStarts();
      });
    });
    pool.on('error', (error: unknown) => log.error({ err: error }, 'pdf worker pool error'));
    log.debug({ workers: config.workers, engine: config.engine }, 'pdf workers starting (first parse)');
    return pool;
  }

  private closed = false;

  /** While a worker is starting, a request past its queue wait waits on for the start deadline. */
  private get starting(): number {
    return this.unready + this.warming;
  }

  /**
   * The worker start deadline, part one: a thread that has not loaded its module within it is
   * terminated; Piscina drops it and the next warm-up or request starts another. Called whenever
   * Piscina may have added a thread.
   */
  private watchStarts(): void {
    for (const thread of this.piscina?.threads ?? []) {
      if (this.watched.has(thread)) continue;
      this.watched.add(thread);
      if (this.reportedReady.has(thread.threadId)) continue;
      this.unready += 1;
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        this.unready -= 1;
        clearTimeout(deadline);
        thread.off('message', onMessage);
      };
      const onMessage = (message: unknown) => {
        if (typeof message === 'object' && message !== null && PISCINA_READY in message) settle();
      };
      const deadline = setTimeout(() => {
        settle();
        if (this.closed) return;
        this.log.warn({ threadId: thread.threadId, deadlineMs: this.config.workerStartTimeoutMs }, 'pdf worker did not start within its deadline; terminated');
        thread.terminate().catch(() => {});
      }, this.config.workerStartTimeoutMs);
      deadline.unref();
      thread.on('message', onMessage);
      thread.once('exit', settle);
    }
  }

  /**
   * Loads the engine in an idle worker so the first real request does not pay for it. The start
   * deadline, part two: a warm-up still running that long after it began is aborted, which makes
   * Piscina terminate its worker and start another. The caller has counted it in `warming`.
   */
  private warmOne(): void {
    const { port1, port2 } = new MessageChannel();
    const abort = new AbortController();
    let deadline: NodeJS.Timeout | undefined;
    port1.on('message', (message: WorkerMessage) => {
      if (message.type !== 'started' || deadline) return;
      deadline = setTimeout(() => {
        this.log.warn({ threadId: message.thread_id, deadlineMs: this.config.workerStartTimeoutMs }, 'pdf worker did not load its engine within the start deadline; terminated');
        abort.abort('start');
      }, this.config.workerStartTimeoutMs);
    });
    const task: ParseTask = { bytes: new Uint8Array(0), engine: this.config.engine, startPage: 1, maxPages: 1, maxChars: 1, memoryLimitBytes: this.config.workerMemoryBytes, port: port2, warmup: true };
    let running: Promise<unknown>;
    try {
      running = this.startedPool().run(task, { transferList: [port2] as never, signal: abort.signal });
    } catch (error) {
      this.log.warn({ err: error }, 'pdf worker warm-up not started');
      this.warming -= 1;
      port1.close();
      return;
    }
    running
      .catch(() => {})
      .finally(() => {
        clearTimeout(deadline);
        this.warming -= 1;
        setImmediate(() => port1.close());
      });
  }

  get stats() {
    const pool = this.piscina;
    return { workers: this.config.workers, threads: pool?.threads.length ?? 0, in_flight: this.inFlight, queued: pool?.queueSize ?? 0, completed: pool?.completed ?? 0, peak_heap_bytes: this.peakHeapBytes };
  }

  private queueFull(): ServiceError {
    return new ServiceError('pdf_queue_full', `All ${this.config.workers} PDF workers are busy and ${this.config.maxPending} requests are already waiting; retry shortly.`, {
      retryAfterSeconds: 1,
      retryable: true,
    });
  }

  /**
   * Holds a place in the queue before a request's bytes are read, so a full pool refuses an
   * upload before buffering it. `run` with the place takes it over; `release` (idempotent)
   * gives back a place never used. Throws 503 `pdf_queue_full` at once when there is none.
   */
  reserve(): PoolPlace {
    if (this.inFlight + this.reserved >= this.config.workers + this.config.maxPending) throw this.queueFull();
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
    const placed = place?.release() ?? false;
    if (!placed && this.inFlight + this.reserved >= this.config.workers + this.config.maxPending) throw this.queueFull();
    this.inFlight += 1;
    const dispatchStarted = performance.now();
    const submittedAt = performance.timeOrigin + dispatchStarted;
    const { port1, port2 } = new MessageChannel();
    const abort = new AbortController();
    const task: ParseTask = { ...request, engine, memoryLimitBytes: this.config.workerMemoryBytes, port: port2 };
    // The bytes move to the worker instead of being copied.
    const transferList = [port2, ...(request.bytes.byteOffset === 0 && request.bytes.byteLength === request.bytes.buffer.byteLength && request.bytes.buffer instanceof ArrayBuffer ? [request.bytes.buffer] : [])];
    let running: Promise<unknown>;
    try {
      running = this.startedPool().run(task, { transferList: transferList as never, signal: abort.signal });
    } catch (error) {
      this.inFlight -= 1;
      port1.close();
      throw this.errorFor(error, undefined, false);
    }
    const executorDispatchMs = performance.now() - dispatchStarted;
    // Piscina may have started a thread for this task (the pool regrows on demand).
    this.watchStarts();

    const pageQueue: WorkerPage[] = [];
    let wake: (() => void) | undefined;
    let finished = false;
    let failure: unknown;
    let timer: NodeJS.Timeout | undefined;
    let startedAt: number | undefined;
    let workerStartMs = 0;
    let reason: StopReason | undefined;
    let watchdog: NodeJS.Timeout | undefined;

    const stop = (why: typeof reason) => {
      if (reason || finished) return;
      reason = why;
      abort.abort(why);
    };
    // A request waits the queue timeout for a worker. If a worker is still starting by then, it
    // may get that one: it waits on, up to the start deadline (counted from its arrival).
    const { queueTimeoutMs, workerStartTimeoutMs } = this.config;
    timer = setTimeout(() => {
      if (this.starting === 0) return stop('queue');
      timer = setTimeout(() => stop(this.starting > 0 ? 'start' : 'queue'), Math.max(0, workerStartTimeoutMs - queueTimeoutMs));
    }, queueTimeoutMs);

    const result = new Promise<{ summary: WorkerSummary }>((resolve, reject) => {
      let summary: WorkerSummary | undefined;
      let workerFailure: ServiceError | undefined;
      // The worker's last message on the task's port ('done' or 'failed') and Piscina's answer to
      // the task come over two channels, with no order between them: on a busy machine the task's
      // answer can land first. So the parse ends when both have come; the port's message is
      // awaited for a while after the task's answer, never judged by one turn of the event loop.
      let taskEnded = false;
      let lateMessage: NodeJS.Timeout | undefined;
      const settle = () => {
        if (!taskEnded || !(summary || workerFailure)) return;
        clearTimeout(lateMessage);
        if (workerFailure) reject(workerFailure);
        else resolve({ summary: summary! });
      };
      port1.on('message', (message: WorkerMessage) => {
        switch (message.type) {
          case 'started': {
            startedAt = performance.now();
            clearTimeout(timer);
            watchdog = this.watchMemory(message.thread_id, () => stop('memory'));
            timer = setTimeout(() => stop('parse'), this.config.parseTimeoutMs);
            // A worker that booted after the request arrived made it wait for its start.
            workerStartMs = Math.max(0, Math.min(message.booted_at, message.at) - submittedAt);
            break;
          }
          case 'page':
            pageQueue.push(message.page);
            wake?.();
            break;
          case 'done':
            summary = message.summary;
            settle();
            break;
          case 'failed':
            workerFailure = new ServiceError(message.code, message.message, { retryable: false });
            settle();
            break;
        }
      });
      running.then(
        () => {
          taskEnded = true;
          settle();
          if (!summary && !workerFailure) lateMessage = setTimeout(() => reject(new ServiceError('pdf_worker_unavailable', 'The PDF worker ended without an answer.', { retryable: true })), LAST_MESSAGE_GRACE_MS);
        },
        (error: unknown) => reject(this.errorFor(error, reason, startedAt !== undefined)),
      );
    }).finally(() => {
      clearTimeout(timer);
      clearInterval(watchdog);
      finished = true;
      this.inFlight -= 1;
      port1.close();
      wake?.();
    });
    result.then(
      (value) => {
        this.peakHeapBytes = Math.max(this.peakHeapBytes, value.summary.peak_heap_bytes);
        this.log.debug({ pages: value.summary.pages_returned, peakHeapBytes: value.summary.peak_heap_bytes, roundtripMs: Math.round(timings().worker_roundtrip_ms) }, 'pdf parsed');
      },
      (error: unknown) => {
        failure = error;
      },
    );

    const pages: AsyncIterable<WorkerPage> = {
      [Symbol.asyncIterator]: async function* () {
        while (true) {
          const next = pageQueue.shift();
          if (next) {
            yield next;
            continue;
          }
          if (finished) {
            // Let the result's own handlers record the failure first.
            await result.catch(() => {});
            if (failure) throw failure;
            return;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      },
    };
    let engineLoadMs = 0;
    result.then((value) => (engineLoadMs = value.summary.engine_load_ms)).catch(() => {});
    let endedAt: number | undefined;
    result.finally(() => (endedAt = performance.now())).catch(() => {});
    const timings = (): ParseTimings => {
      const now = endedAt ?? performance.now();
      const began = startedAt ?? now;
      return {
        worker_start_ms: workerStartMs + engineLoadMs,
        worker_queue_ms: Math.max(0, began - dispatchStarted - workerStartMs),
        worker_roundtrip_ms: startedAt === undefined ? 0 : Math.max(0, now - startedAt),
        executor_dispatch_ms: executorDispatchMs,
      };
    };
    return { pages, result, cancel: () => stop('cancel'), timings };
  }

  /**
   * V8's own cap (resourceLimits) ends a worker that passes it, but a large allocation right at
   * the limit makes V8 abort the whole process instead. So the heap of the worker running a
   * task is polled, and the worker is terminated (cleanly, from outside) once it passes
   * WATCHDOG_FRACTION of the cap, well before V8's hard limit.
   */
  private watchMemory(threadId: number, exceeded: () => void): NodeJS.Timeout {
    const softLimit = this.config.workerMemoryBytes * WATCHDOG_FRACTION;
    let checking = false;
    const interval = setInterval(() => {
      if (checking) return;
      const worker = this.piscina?.threads.find((thread) => thread.threadId === threadId) as (Worker & { getHeapStatistics?: () => Promise<HeapInfo> }) | undefined;
      if (!worker?.getHeapStatistics) return;
      checking = true;
      worker
        .getHeapStatistics()
        .then((stats) => {
          if (stats.used_heap_size + stats.external_memory > softLimit) exceeded();
        })
        .catch(() => {})
        .finally(() => {
          checking = false;
        });
    }, WATCHDOG_INTERVAL_MS);
    interval.unref();
    return interval;
  }

  /** `began`: the worker had started the task (else it died before, still loading). */
  private errorFor(error: unknown, reason: StopReason | undefined, began: boolean): ServiceError {
    if (reason === 'queue') {
      return new ServiceError('pdf_queue_timeout', `No PDF worker became free within ${this.config.queueTimeoutMs / 1000} s; retry shortly.`, { retryAfterSeconds: 1, retryable: true });
    }
    if (reason === 'start') {
      return new ServiceError('pdf_worker_unavailable', `No PDF worker started within ${this.config.workerStartTimeoutMs / 1000} s.`, { retryAfterSeconds: 5, retryable: true });
    }
    if (reason === 'parse') {
      this.log.warn('pdf parse deadline passed; worker terminated and replaced');
      return new ServiceError('pdf_parse_timeout', `Parsing did not finish within ${this.config.parseTimeoutMs / 1000} s; the parse was stopped. Ask for fewer pages or a smaller file.`, { retryable: false });
    }
    if (reason === 'memory') {
      this.log.warn('pdf worker passed its memory cap; terminated and replaced');
      return new ServiceError('pdf_too_complex', `Extracting this document needs more than the ${this.config.workerMemoryBytes} bytes a parser worker may use.`, { retryable: false });
    }
    if (reason === 'cancel') return new ServiceError('bad_request', 'The client went away; the parse was stopped.');
    const code = (error as { code?: string }).code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
      this.log.warn('pdf worker ran out of memory; replaced');
      return new ServiceError('pdf_too_complex', `Extracting this document needs more than the ${this.config.workerMemoryBytes} bytes a parser worker may use.`, { retryable: false });
    }
    if (/queue is at limit|no task queue/i.test((error as Error).message ?? '')) {
      return new ServiceError('pdf_queue_full', 'All PDF workers are busy and the waiting room is full; retry shortly.', { retryAfterSeconds: 1, retryable: true });
    }
    // Handed to a worker that died before running it: the start deadline ended it (or it crashed loading).
    if (!began) return this.errorFor(error, 'start', true);
    this.log.error({ err: error }, 'pdf worker failed');
    return new ServiceError('pdf_worker_unavailable', 'The PDF worker stopped unexpectedly; retry.', { retryable: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.piscina?.destroy();
  }
}
