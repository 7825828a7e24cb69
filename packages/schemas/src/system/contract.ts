import { z } from 'zod';
import { defineContract, defineRoute, text } from '../route.ts';
import { ApiHealthResponse, HealthResponse, OpenApiDocument, PerformanceProtocol, ReadyResponse, ServiceRoot } from './documents.ts';
import { CacheResponse, ModelInfo, ModelsResponse } from './models.ts';
import { CachePurgeQuery, CachePurgeResponse, RESPONSE_CACHE_NAME } from '../inference/response-cache.ts';

const publicRoute = { auth: { kind: 'public' }, surface: 'base', tags: ['system'] } as const;

const builtInWorker = {
  errors: [503],
  description:
    'Built once per public URL pair from the whole contract, in a worker thread (started when the server listens) so the build never holds other callers. If the build fails or passes its 30 s deadline: 503 `discovery_documents_unavailable`; retry, the next request builds again.',
} as const;

export const systemContract = defineContract({
  root: defineRoute({
    ...publicRoute,
    cors: 'any-origin',
    method: 'GET',
    path: '/',
    summary: 'Service root: liveness and self-description',
    description:
      'A browser (an Accept header that prefers text/html to JSON) is sent to the web console at /ui/ with a 302 when the console is on; ' +
      'every other caller (Accept: application/json, */*, or none) gets this JSON. The answer varies by Accept.',
    responses: { 200: ServiceRoot },
  }),
  healthz: defineRoute({
    ...publicRoute,
    method: 'GET',
    path: '/healthz',
    summary: 'Liveness and database reachability',
    responses: { 200: HealthResponse, 503: HealthResponse },
  }),
  readyz: defineRoute({
    ...publicRoute,
    method: 'GET',
    path: '/readyz',
    summary: 'Readiness: 200 while taking new work; 503 at once when a shutdown begins (SIGTERM) or the database is unreachable',
    description: 'Point a load balancer here, and liveness probes at /healthz: a draining server is alive but must get no new requests.',
    responses: { 200: ReadyResponse, 503: ReadyResponse },
  }),
  health: defineRoute({
    ...publicRoute,
    method: 'GET',
    path: '/health',
    summary: 'Liveness and database reachability (alias of /healthz)',
    responses: { 200: HealthResponse, 503: HealthResponse },
  }),
  apiHealth: defineRoute({
    ...publicRoute,
    surface: 'api',
    method: 'GET',
    path: '/api/health',
    summary: 'Liveness of the api surface',
    responses: { 200: ApiHealthResponse, 503: ApiHealthResponse },
  }),
  openapi: defineRoute({
    ...publicRoute,
    cors: 'any-origin',
    method: 'GET',
    path: '/openapi.json',
    summary: 'OpenAPI 3.1 document generated from the contract',
    ...builtInWorker,
    responses: { 200: OpenApiDocument },
  }),
  llmsTxt: defineRoute({
    ...publicRoute,
    cors: 'any-origin',
    method: 'GET',
    path: '/llms.txt',
    summary: 'Plain-text pointer for agents',
    ...builtInWorker,
    responses: { 200: text() },
  }),
  agentsTxt: defineRoute({
    ...publicRoute,
    cors: 'any-origin',
    method: 'GET',
    path: '/agents.txt',
    summary: 'Plain-text pointer for agents (same body as /llms.txt)',
    ...builtInWorker,
    responses: { 200: text() },
  }),
  llmsFullTxt: defineRoute({
    ...publicRoute,
    cors: 'any-origin',
    method: 'GET',
    path: '/llms-full.txt',
    summary: 'Every operation with its method, path, auth and summary',
    ...builtInWorker,
    responses: { 200: text() },
  }),
  performance: defineRoute({
    ...publicRoute,
    method: 'GET',
    path: '/.well-known/performance',
    summary: 'Public benchmark protocol',
    responses: { 200: PerformanceProtocol },
  }),
  performanceJson: defineRoute({
    ...publicRoute,
    method: 'GET',
    path: '/.well-known/performance.json',
    summary: 'Public benchmark protocol (JSON alias)',
    responses: { 200: PerformanceProtocol },
  }),
  metrics: defineRoute({
    method: 'GET',
    path: '/v1/metrics',
    surface: 'base',
    tags: ['system'],
    auth: { kind: 'bearer', principals: ['operator'] },
    summary: 'Prometheus metrics: request counts and latency histograms per route',
    responses: { 200: text('text/plain; version=0.0.4; charset=utf-8') },
  }),
});

export const modelsContract = defineContract({
  list: defineRoute({
    method: 'GET',
    path: '/v1/models',
    surface: 'base',
    tags: ['models'],
    auth: { kind: 'scoped', scopes: ['models:read'] },
    summary: 'Engines and models this server knows',
    responses: { 200: ModelsResponse },
  }),
  get: defineRoute({
    method: 'GET',
    path: '/v1/models/*model',
    surface: 'base',
    tags: ['models'],
    auth: { kind: 'scoped', scopes: ['models:read'] },
    summary: "One model by id (OpenAI's models.retrieve)",
    description:
      "The same object as the model's item in /v1/models. An id may hold slashes (`org/model`), sent as they are or encoded. An id this server does not serve: 404 `model_not_found`.",
    params: z.object({ model: z.string().min(1).max(256) }),
    errors: [404],
    responses: { 200: ModelInfo },
  }),
  cache: defineRoute({
    method: 'GET',
    path: '/v1/cache',
    surface: 'base',
    tags: ['models'],
    auth: { kind: 'scoped', scopes: ['models:read'] },
    summary: 'State of the server caches',
    description:
      `Each cache with its entries, hits and misses. The response cache (\`${RESPONSE_CACHE_NAME}\`, shared by every replica through the database) also reports its bytes, hit rate and TTL. ` +
      'The operator sees every cache with the numbers of the whole server (`view: server`). Any other caller sees only the response cache, and only its own share of it (`view: principal`): ' +
      'the live entries stored under its principal (the operator, or one OAuth agent with all its developer keys) and their bytes, on every replica, and the hits and misses of its own lookups counted by the process that answers. ' +
      "Another principal's entries, and the server's worker pools and internal caches, are not shown to it.",
    responses: { 200: CacheResponse },
  }),
  purgeCache: defineRoute({
    method: 'DELETE',
    path: '/v1/cache',
    surface: 'base',
    tags: ['models'],
    auth: { kind: 'bearer', principals: ['operator'] },
    summary: 'Purge the response cache (operator only)',
    description:
      'Deletes the stored answers of the response cache, every one or those of one `model`, for every replica at once (they share the database). ' +
      'On PostgreSQL it answers once no replica trusts a body it held from before the delete (`SVC_RESPONSE_CACHE_MEMORY_TRUST_MS`, 1 s): from then on no replica serves a purged answer. ' +
      'Answers the count and bytes removed. Purging again is harmless: it removes what was stored since.',
    query: CachePurgeQuery,
    responses: { 200: CachePurgeResponse },
  }),
});
