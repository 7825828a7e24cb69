/**
 * The server of bench/mcp, in its own worker thread so it shares no event loop with the load
 * generator and the bench can read the CPU its thread spends (process.threadCpuUsage): the full
 * svc server on an embedded database (or TEST_DATABASE_URL's), serving REST and /mcp side by side.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { answerBenchMessages, startSvcInThread } from './svc-servers.ts';

const { databaseUrl, dataDir } = workerData as { databaseUrl: string | undefined; dataDir: string };
const { svc, baseUrl } = await startSvcInThread(dataDir, databaseUrl, {
  // autocannon keeps sending on a connection after `Connection: close`; real clients reconnect.
  SVC_HTTP_MAX_REQUESTS_PER_SOCKET: '0',
});
parentPort!.postMessage({ url: baseUrl });
answerBenchMessages(
  parentPort!,
  () => svc.close(),
  (message) => {
    if (message === 'token') parentPort!.postMessage({ token: svc.operatorToken });
  },
);
