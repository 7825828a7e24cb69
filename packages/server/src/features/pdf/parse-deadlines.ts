/** Why a parse was stopped from outside; each maps to one error answer (ParserPool.errorFor). */
export type StopReason = 'queue' | 'start' | 'parse' | 'cancel' | 'memory' | 'unloadable';

/**
 * How many workers the pool is starting: threads still loading their module, and warm-ups still
 * loading the engine. Waiting requests listen for the moment that number reaches or leaves zero,
 * since what they wait for (a worker starting, or a busy one) decides which deadline runs.
 */
export class WorkerStarts {
  private count = 0;
  private readonly listeners = new Set<() => void>();

  get any(): boolean {
    return this.count > 0;
  }

  /** Threads loading their module plus warm-ups loading the engine, now. */
  get starting(): number {
    return this.count;
  }

  begin(): void {
    this.count += 1;
    if (this.count === 1) this.notify();
  }

  end(): void {
    this.count -= 1;
    if (this.count === 0) this.notify();
  }

  /** Calls `listener` whenever `any` changes; answers how to stop. */
  watch(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

export interface DeadlineLimits {
  queueTimeoutMs: number;
  workerStartTimeoutMs: number;
  parseTimeoutMs: number;
}

type Phase = 'start' | 'queue' | 'parse' | 'ended';

/**
 * The deadlines of one parse, and the waiting phases they time. Until a worker begins the task,
 * the wait is split by what it is waiting for: while the pool is starting a worker, that time
 * counts against the worker start deadline (spec: 30 s) and is `worker_start_ms`; while every
 * worker is up and busy, against the queue deadline (spec: 2 s) and is `worker_queue_ms`. Each
 * budget runs only in its own phase, so the first request after the lazy start, which waits for
 * the workers to load, is not refused by the queue wait meant for busy workers. Once a worker has
 * begun the task, the parse deadline runs. `expire` is called at most once, with the phase whose
 * budget ran out.
 */
export class ParseDeadlines {
  private phase: Phase;
  private phaseSince = performance.now();
  private startSpent = 0;
  private queueSpent = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly unwatch: () => void;
  private readonly limits: DeadlineLimits;
  private readonly starts: WorkerStarts;
  private readonly expire: (why: 'start' | 'queue' | 'parse') => void;

  constructor(limits: DeadlineLimits, starts: WorkerStarts, expire: (why: 'start' | 'queue' | 'parse') => void) {
    this.limits = limits;
    this.starts = starts;
    this.expire = expire;
    this.phase = starts.any ? 'start' : 'queue';
    this.unwatch = starts.watch(() => this.startsChanged());
    this.arm();
  }

  /**
   * A worker has begun the task (at `at`, on `performance.now()`'s clock, when its message was
   * read late): the wait ends there, and the parse deadline starts now.
   */
  began(at = performance.now()): void {
    if (this.phase !== 'start' && this.phase !== 'queue') return;
    this.closeWait(Math.max(this.phaseSince, at));
    this.unwatch();
    this.phase = 'parse';
    this.arm();
  }

  /** The parse is over (answered, failed or stopped): no deadline runs any more. */
  end(): void {
    this.closeWait();
    this.unwatch();
    clearTimeout(this.timer);
    this.phase = 'ended';
  }

  /** Milliseconds waited so far while a worker was starting, and while every worker was busy. */
  waited(): { startMs: number; queueMs: number } {
    const open = performance.now() - this.phaseSince;
    return {
      startMs: this.startSpent + (this.phase === 'start' ? open : 0),
      queueMs: this.queueSpent + (this.phase === 'queue' ? open : 0),
    };
  }

  private startsChanged(): void {
    const next = this.starts.any ? 'start' : 'queue';
    if ((this.phase !== 'start' && this.phase !== 'queue') || next === this.phase) return;
    this.closeWait();
    this.phase = next;
    this.arm();
  }

  /** Books the time from the phase's start to `now` to that phase's budget. */
  private closeWait(now = performance.now()): void {
    if (this.phase === 'start') this.startSpent += now - this.phaseSince;
    if (this.phase === 'queue') this.queueSpent += now - this.phaseSince;
    this.phaseSince = now;
  }

  private arm(): void {
    clearTimeout(this.timer);
    const phase = this.phase;
    if (phase === 'ended') return;
    const budget =
      phase === 'start'
        ? this.limits.workerStartTimeoutMs - this.startSpent
        : phase === 'queue'
          ? this.limits.queueTimeoutMs - this.queueSpent
          : this.limits.parseTimeoutMs;
    this.timer = setTimeout(() => this.expire(phase), Math.max(0, budget));
  }
}
