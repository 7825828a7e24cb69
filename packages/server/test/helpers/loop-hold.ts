import { collectGarbage } from './collect-garbage.ts';

/**
 * How long this process's main thread held its event loop: the longest gap between ticks of a
 * 5 ms timer, counting only the main thread's own CPU time in the gap. monitorEventLoopDelay
 * counts wall time, so on a busy machine (other test files, other processes) a thread that
 * simply was not scheduled looks like a stall; the thread's CPU time does not grow then, so what
 * is left is work the server (and the client, in this process) did without yielding.
 */
export class LoopHold {
  private heldMs = 0;
  private lastWall = performance.now();
  private lastCpu = threadCpuMs();
  private readonly timer = setInterval(() => {
    const wall = performance.now();
    const cpu = threadCpuMs();
    this.heldMs = Math.max(this.heldMs, Math.min(wall - this.lastWall, cpu - this.lastCpu));
    this.lastWall = wall;
    this.lastCpu = cpu;
  }, 5);

  /** The longest hold since the last call (or the start), in ms; starts a new window. */
  take(): number {
    const held = this.heldMs;
    this.heldMs = 0;
    return held;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** The longest hold of the event loop while `work` ran (see LoopHold). */
export async function measureLoopHold<T>(work: () => Promise<T>): Promise<{ result: T; heldMs: number }> {
  // The earlier tests' megabytes of bodies and answers are collected before the watch begins: a
  // collection of them is not this work's hold (one landed in a 600-sentence summary's watch,
  // 101-135 ms, where the route alone holds at most 49 ms). The work's own garbage still counts.
  collectGarbage();
  const hold = new LoopHold();
  try {
    const result = await work();
    return { result, heldMs: hold.take() };
  } finally {
    hold.stop();
  }
}

/** The main thread's CPU time (user and system), in ms; it moves in the kernel's ticks (4 ms here). */
export function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}
