/**
 * The soak's liveness probe, on a thread of its own: `/healthz` due every 50 ms, each latency
 * counted from when the probe was due. On the load generator's thread a probe waited behind the
 * generator's own work (building requests, parsing answers), which no other caller of the server
 * waits for; here it waits only for the server (and for the machine's cores, which it shares).
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { url, durationMs } = workerData as { url: string; durationMs: number };
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const latencies: number[] = [];
const stopAt = performance.now() + durationMs;

function probe(): Promise<void> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent, timeout: 30_000 }, (response) => {
      response.resume();
      response.on('end', resolve);
      response.on('error', () => resolve());
    });
    // A failed probe counts with the time it took.
    request.on('error', () => resolve());
    request.on('timeout', () => request.destroy());
  });
}

let due = performance.now();
while (performance.now() < stopAt) {
  await probe();
  const answered = performance.now();
  latencies.push(answered - due);
  due = Math.max(due + 50, answered);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - answered)));
}
agent.destroy();
parentPort!.postMessage(latencies);
