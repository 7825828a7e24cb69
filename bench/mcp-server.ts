/**
 * The server of bench/mcp, in its own worker thread so it shares no event loop with the load
 * generator and the bench can read the CPU its thread spends (process.threadCpuUsage): the full
 * svc server on an embedded database (or TEST_DATABASE_URL's), serving REST and /mcp side by side.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { startSvcInThread } from './svc-servers.ts';

const { databaseUrl, dataDir } = workerData as { databaseUrl: string | undefined; dataDir: string };
const { svc, baseUrl } = await startSvcInThread(dataDir, databaseUrl, {
  // autocannon keeps sending on a connection after `Connection: close`; real clients reconnect.
  SVC_HTTP_MAX_REQUESTS_PER_SOCKET: '0',
});
parentPort!.postMessage({ url: baseUrl });
// BENCH_PROFILE_DIR: the bench profiles this thread over chosen rounds only ('profile:start', then
// 'profile:stop:<file>'), leaving out start-up and migrations.
let profiler: Session | undefined;
parentPort!.on('message', async (message: string) => {
  if (message === 'cpu') parentPort!.postMessage({ cpu: process.threadCpuUsage() });
  if (message === 'profile:start') {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.start');
    parentPort!.postMessage({ profiling: true });
  }
  if (message.startsWith('profile:stop:') && profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    await writeFile(message.slice('profile:stop:'.length), JSON.stringify(profile));
    profiler.disconnect();
    parentPort!.postMessage({ profiled: true });
  }
  if (message === 'token') parentPort!.postMessage({ token: svc.operatorToken });
  if (message === 'close') void svc.close().then(() => process.exit(0));
});
