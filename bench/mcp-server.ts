/**
 * The server of bench/mcp, in its own worker thread so it shares no event loop with the load
 * generator and the bench can read the CPU its thread spends (process.threadCpuUsage): the full
 * svc server on an embedded database (or TEST_DATABASE_URL's), serving REST and /mcp side by side.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createServer, loadConfig } from '@svc/server';

const { databaseUrl, dataDir } = workerData as { databaseUrl: string | undefined; dataDir: string };
const svc = await createServer(
  loadConfig({
    SVC_HOST: '127.0.0.1',
    SVC_PORT: '0',
    SVC_DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    SVC_LOG_LEVEL: 'silent',
    // autocannon keeps sending on a connection after `Connection: close`; real clients reconnect.
    SVC_HTTP_MAX_REQUESTS_PER_SOCKET: '0',
  }),
);
const { baseUrl } = await svc.listen();
parentPort!.postMessage({ url: baseUrl });
parentPort!.on('message', (message: string) => {
  if (message === 'cpu') parentPort!.postMessage({ cpu: process.threadCpuUsage() });
  if (message === 'token') parentPort!.postMessage({ token: svc.operatorToken });
  if (message === 'close') void svc.close().then(() => process.exit(0));
});
