/**
 * How long this process's main thread held its event loop while `work` ran: the longest gap
 * between ticks of a 5 ms timer, counting only the main thread's own CPU time in the gap.
 * monitorEventLoopDelay counts wall time, so on a busy machine (other test files, other
 * processes) a thread that simply was not scheduled looks like a stall; the thread's CPU time
 * does not grow then, so what is left is work the server (and the client, in this process) did
 * without yielding.
 */
export async function measureLoopHold<T>(work: () => Promise<T>): Promise<{ result: T; heldMs: number }> {
  let heldMs = 0;
  let lastWall = performance.now();
  let lastCpu = threadCpuMs();
  const timer = setInterval(() => {
    const wall = performance.now();
    const cpu = threadCpuMs();
    heldMs = Math.max(heldMs, Math.min(wall - lastWall, cpu - lastCpu));
    lastWall = wall;
    lastCpu = cpu;
  }, 5);
  try {
    const result = await work();
    return { result, heldMs };
  } finally {
    clearInterval(timer);
  }
}

function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}
