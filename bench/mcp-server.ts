/**
 * The server of bench/mcp, in its own worker thread so it shares no event loop with the load
 * generator and the bench can read the CPU its thread spends (process.threadCpuUsage): the full
 * svc server on an embedded database (or TEST_DATABASE_URL's), serving REST and /mcp side by side,
 * with the operator token, a developer key and an agent's access token.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createClient } from '@svc/client';
import { answerBenchMessages, startSvcInThread } from './svc-servers.ts';

const { databaseUrl, dataDir } = workerData as { databaseUrl: string | undefined; dataDir: string };
const { svc, baseUrl, apiUrl } = await startSvcInThread(dataDir, databaseUrl, {
  // autocannon keeps sending on a connection after `Connection: close`; real clients reconnect.
  SVC_HTTP_MAX_REQUESTS_PER_SOCKET: '0',
});
// The credentials a user holds beside the operator token (bench/keyed-path-server.ts makes them the same way):
// an agent's OAuth access token, and a developer key (no limits, as keys are by default) that agent made.
const session = await createClient({ baseUrl, apiUrl, retry: 0 }).oauth.login({ clientName: 'mcp bench' });
const agent = createClient({ baseUrl, apiUrl, retry: 0, token: session.accessToken });
const created = await agent.developerKeys.create({ body: { name: 'bench', scopes: ['models:read', 'inference:invoke'] } });
const credentials = { operator: svc.operatorToken, key: created.secret, agent: session.accessToken };
parentPort!.postMessage({ url: baseUrl });
answerBenchMessages(
  parentPort!,
  () => svc.close(),
  (message) => {
    if (message === 'token') parentPort!.postMessage({ token: svc.operatorToken });
    if (message === 'credentials') parentPort!.postMessage({ credentials });
  },
);
