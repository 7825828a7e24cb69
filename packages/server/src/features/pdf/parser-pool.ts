import { MessageChannel, type Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { ServiceError } from '../../http/service-error.ts';
import type { PdfConfig } from './pdf-config.ts';
import type { ParseTask, WorkerMessage, WorkerPage, WorkerSummary } from './worker/pdf-worker.ts';

type StopReason = 'queue' | 'start' | 'parse' | 'cancel' | 'memory';
interface HeapInfo {
  used_heap_size: number;
  external_memory: number;
}
const WATCHDOG_FRACTION = 0.75;
const WATCHDOG_INTERVAL_MS = 20;

const WORKER_FILE = new URL('./worker/pdf-worker.ts', import.meta.url).href;

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

/**
 * The bounded PDF parser pool: Piscina with a fixed number of workers, each with a V8 memory
 * cap (`resourceLimits`). Admission is counted here: `workers` parses run, `maxPending` wait,
 * anything more is refused at once (503 `pdf_queue_full`). A waiting request gives up after the
 * queue timeout (503 `pdf_queue_timeout`), or the worker start deadline while the pool is
 * (re)starting a worker. A parse past its deadline is aborted, which makes Piscina terminate
 * that worker and start a fresh one (504 `pdf_parse_timeout`). A worker that dies (out of
 * memory, crash) fails only its own request.
 */
export class ParserPool {
  private readonly pool: Piscina;
  private readonly config: PdfConfig;
  private readonly log: Logger;
  private inFlight = 0;
  /**
   * Replacement workers still loading (after a termination or a crash). While one is starting,
   * a waiting request gets the worker start deadline instead of the queue's.
   */
  private starting = 0;
  peakHeapBytes = 0;

  constructor(config: PdfConfig, log: Logger) {
    this.config = config;
    this.log = log;
    const memoryMb = Math.floor(config.workerMemoryBytes / (1024 * 1024));
    // pdf.js makes many short-lived objects: a young generation too small for them costs a third
    // of the throughput (measured: 64 MiB about 160 pages/s, 128 MiB about 250, over 2 workers).
    const youngMb = Math.min(128, Math.max(16, Math.floor(memoryMb / 6)));
    this.pool = new Piscina({
      filename: WORKER_FILE,
      minThreads: config.workers,
      maxThreads: config.workers,
      // Admission is counted in run(); this only backs it up (warm-up tasks take queue slots too).
      maxQueue: config.maxPending + config.workers,
      concurrentTasksPerWorker: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
      // Young and old generation together stay under the cap; the watchdog below acts first.
      resourceLimits: { maxOldGenerationSizeMb: Math.max(32, memoryMb - youngMb), maxYoungGenerationSizeMb: youngMb, stackSizeMb: 4 },
    });
    // A worker counts as started once a warm-up task (which loads the engine) has run on the pool.
    this.starting = config.workers;
    this.pool.on('workerDestroy', () => {
      if (!this.closed) this.starting += 1;
      // Boot the replacement now rather than on the next request (after Piscina has removed
      // the destroyed worker, or the task would be handed to it).
      setImmediate(() => {
        if (!this.closed) this.warm(1);
      });
    });
    this.warm(config.workers);
    this.pool.on('error', (error: unknown) => log.error({ err: error }, 'pdf worker pool error'));
  }

  private closed = false;

  /** Loads the engine in idle workers so the first real request does not pay for it. */
  private warm(count: number): void {
    for (let index = 0; index < count; index += 1) {
      const { port1, port2 } = new MessageChannel();
      port1.on('message', () => {});
      const task: ParseTask = { bytes: new Uint8Array(0), engine: this.config.engine, startPage: 1, maxPages: 1, maxChars: 1, memoryLimitBytes: this.config.workerMemoryBytes, port: port2, warmup: true };
      let running: Promise<unknown>;
      try {
        running = this.pool.run(task, { transferList: [port2] as never });
      } catch (error) {
        this.log.warn({ err: error }, 'pdf worker warm-up not started');
        this.starting = Math.max(0, this.starting - 1);
        port1.close();
        continue;
      }
      running
        .catch(() => {})
        .finally(() => {
          this.starting = Math.max(0, this.starting - 1);
          setImmediate(() => port1.close());
        });
    }
  }

  get stats() {
    return { workers: this.config.workers, in_flight: this.inFlight, queued: this.pool.queueSize, completed: this.pool.completed, peak_heap_bytes: this.peakHeapBytes };
  }

  /** Admits a parse or throws 503 at once when the workers and the waiting room are full. */
  run(request: ParseRequest, engine: PdfConfig['engine']): ParseRun {
    if (this.inFlight >= this.config.workers + this.config.maxPending) {
      throw new ServiceError('pdf_queue_full', `All ${this.config.workers} PDF workers are busy and ${this.config.maxPending} requests are already waiting; retry shortly.`, {
        retryAfterSeconds: 1,
        retryable: true,
      });
    }
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
      running = this.pool.run(task, { transferList: transferList as never, signal: abort.signal });
    } catch (error) {
      this.inFlight -= 1;
      port1.close();
      throw this.errorFor(error, undefined);
    }
    const executorDispatchMs = performance.now() - dispatchStarted;

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
    const waitDeadline = this.starting > 0 ? Math.max(this.config.queueTimeoutMs, this.config.workerStartTimeoutMs) : this.config.queueTimeoutMs;
    timer = setTimeout(() => stop(this.starting > 0 ? 'start' : 'queue'), waitDeadline);

    const result = new Promise<{ summary: WorkerSummary }>((resolve, reject) => {
      let summary: WorkerSummary | undefined;
      let workerFailure: ServiceError | undefined;
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
            break;
          case 'failed':
            workerFailure = new ServiceError(message.code, message.message, { retryable: false });
            break;
        }
      });
      running.then(
        () => {
          // Messages on the task's port may still be in flight: let them land first.
          setImmediate(() => {
            if (workerFailure) return reject(workerFailure);
            if (!summary) return reject(new ServiceError('pdf_worker_unavailable', 'The PDF worker ended without an answer.', { retryable: true }));
            resolve({ summary });
          });
        },
        (error: unknown) => reject(this.errorFor(error, reason)),
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
      const worker = this.pool.threads.find((thread) => thread.threadId === threadId) as (Worker & { getHeapStatistics?: () => Promise<HeapInfo> }) | undefined;
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

  private errorFor(error: unknown, reason: StopReason | undefined): ServiceError {
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
    this.log.error({ err: error }, 'pdf worker failed');
    return new ServiceError('pdf_worker_unavailable', 'The PDF worker stopped unexpectedly; retry.', { retryable: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.pool.destroy();
  }
}
