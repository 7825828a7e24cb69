import { Worker } from 'node:worker_threads';

/** A bench server running in its own worker thread, apart from the load generator's event loop. */
export interface WorkerServer {
  url: string;
  /** CPU time (µs) the server's thread has spent so far. */
  cpuMicros(): Promise<number>;
  close(): Promise<void>;
  /** Sends a message and waits for the reply carrying `key` (for messages a bench's server module adds). */
  ask<T>(message: string, key: string): Promise<T>;
}

/**
 * Starts `module` in a worker thread. The module answers `{ url }` once listening, `{ cpu }`
 * (process.threadCpuUsage) to the message 'cpu', and exits on 'close'.
 */
export async function startWorkerServer(module: URL, workerData: unknown): Promise<WorkerServer> {
  const worker = new Worker(module, { workerData });
  const ask = <T>(message: string, key: string) =>
    new Promise<T>((resolve, reject) => {
      const listener = (reply: Record<string, T>) => {
        if (!(key in reply)) return;
        worker.off('message', listener);
        worker.off('error', reject);
        resolve(reply[key]!);
      };
      worker.on('message', listener);
      worker.once('error', reject);
      if (message) worker.postMessage(message);
    });
  const url = await ask<string>('', 'url');
  return {
    url,
    cpuMicros: async () => {
      const cpu = await ask<{ user: number; system: number }>('cpu', 'cpu');
      return cpu.user + cpu.system;
    },
    ask,
    close: async () => {
      worker.postMessage('close');
      await new Promise((resolve) => worker.once('exit', resolve));
    },
  };
}
