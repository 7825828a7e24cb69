/**
 * The server of the keyed-path benches (bench/keyed-path.ts), in its own worker thread: the full
 * svc (`startSvcInThread`) in front of the chat-proxy bench's upstream, with the three credentials
 * a caller may hold: the operator token, a developer key (no limits, as keys are by default), an
 * agent's OAuth access token, and a developer key under every per-minute and concurrency limit
 * (high enough never to refuse the bench: a busy key's slots, places and tokens come in chunks),
 * made through svc's own routes as a user makes them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createClient } from '@svc/client';
import { answerBenchMessages, startSvcInThread } from './svc-servers.ts';

const { dataDir, databaseUrl, upstreamUrl } = workerData as { dataDir: string; databaseUrl: string | undefined; upstreamUrl: string };

const { svc, baseUrl, apiUrl } = await startSvcInThread(dataDir, databaseUrl, {
  SVC_UPSTREAM_BASE_URL: upstreamUrl,
  SVC_UPSTREAM_API_KEY: 'sk-bench',
  SVC_UPSTREAM_MODELS: 'bench-chat',
});
const session = await createClient({ baseUrl, apiUrl, retry: 0 }).oauth.login({ clientName: 'keyed-path bench' });
const agent = createClient({ baseUrl, apiUrl, retry: 0, token: session.accessToken });
const created = await agent.developerKeys.create({ body: { name: 'bench', scopes: ['models:read', 'inference:invoke'] } });
const limited = await agent.credentials.create({
  body: {
    name: 'bench limited',
    scopes: ['models:read', 'inference:invoke'],
    limits: { requests_per_minute: 1_000_000, concurrent_requests: 1_000, tokens_per_minute: 1_000_000_000 },
  },
});
const credentials = { operator: svc.operatorToken, key: created.secret, agent: session.accessToken, limited: limited.secret };

parentPort!.postMessage({ url: baseUrl });
answerBenchMessages(
  parentPort!,
  () => svc.close(),
  (message) => {
    if (message === 'credentials') parentPort!.postMessage({ credentials });
    // The database's count of transactions ended in it (PostgreSQL): this read is one of them.
    if (message === 'transactions')
      void svc.database.sequelize
        .query('SELECT (xact_commit + xact_rollback)::text AS total FROM pg_stat_database WHERE datname = current_database()')
        .then(([rows]) => parentPort!.postMessage({ transactions: Number((rows as Array<{ total: string }>)[0]!.total) }));
  },
);
