/**
 * The server of bench/http-overhead's limits run, in its own worker thread: a scoped echo route
 * behind the real developer-key resolver (one query per request, as in production) and the real
 * key limiter, over a migrated database. Two keys: one with no limits, one with a
 * requests-per-minute limit far above what the bench sends (every request is counted, none is
 * refused). The bench presents each in turn, so the two runs differ only by the limit.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { z } from 'zod';
import { defineContract, defineRoute } from '@svc/schemas';
import { buildContractApp, createHttpMetrics, createLogger, defineHandlers } from '@svc/server';
import { DeveloperKeyService, KeyLimiter, developerKeyResolver, newDeveloperKey, openDatabase, runMigrations } from '@svc/testing/server-internals';

const Body = z.object({ text: z.string().max(1000), count: z.number().int().min(0).max(100) });
const Answer = z.object({ length: z.number(), count: z.number() });

const { databaseUrl, dataDir } = workerData as { databaseUrl?: string; dataDir: string };
const log = createLogger('silent');
const database = await openDatabase({ databaseUrl, dataDir, poolMax: 10, log });
await runMigrations(database.sequelize, log);
const insertKey = async (limits: Record<string, number>) => {
  const fresh = newDeveloperKey();
  await database.sequelize.query(
    `INSERT INTO svc_developer_keys (id, owner, name, scopes, secret_hash, status, created_at, limits)
     VALUES (:id, 'bench-owner', 'bench', ARRAY['models:read']::text[], :hash, 'active', now(), :limits::jsonb)`,
    { replacements: { id: fresh.credentialId, hash: fresh.hash, limits: JSON.stringify(limits) } },
  );
  return fresh.key;
};
const unlimitedKey = await insertKey({});
const limitedKey = await insertKey({ requests_per_minute: 1_000_000 });

const benchContract = defineContract({
  echo: defineRoute({
    method: 'POST',
    path: '/v1/echo',
    surface: 'base',
    auth: { kind: 'scoped', scopes: ['models:read'] },
    summary: 'bench',
    body: Body,
    responses: { 200: Answer },
  }),
});
// The resolver reads only the key's row: the service's receipts are never used here.
const keys = new DeveloperKeyService(database.sequelize, { maxActive: 20, receipts: undefined as never });
const app = buildContractApp({
  contract: benchContract,
  handlers: defineHandlers(benchContract, { echo: async ({ body }) => ({ status: 200, body: { length: body.text.length, count: body.count } }) }),
  surfaces: ['base'],
  resolvers: [developerKeyResolver(keys, {})],
  openAccess: false,
  validateResponses: false,
  trustProxy: false,
  publicUrls: () => ({ baseUrl: 'http://127.0.0.1', apiUrl: 'http://127.0.0.1' }),
  log,
  metrics: createHttpMetrics(),
  keyLimits: new KeyLimiter(database.sequelize, {}, (error) => {
    throw error;
  }),
});

const server = createServer(app.callback());
server.listen(0, '127.0.0.1', () => parentPort!.postMessage({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
parentPort!.on('message', (message: string) => {
  if (message === 'cpu') parentPort!.postMessage({ cpu: process.threadCpuUsage() });
  if (message === 'keys') parentPort!.postMessage({ keys: { unlimitedKey, limitedKey } });
  if (message === 'close') server.close(() => void database.close().then(() => process.exit(0)));
});
