import { API_VERSION, consoleUrl, discoveryLinks, SVC_VERSION, systemContract, tryUrl, urlFor, type HealthResponse } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { ServiceError } from '../../service-error.ts';
import { workerModuleUrl } from '../../worker-modules.ts';
import { runWorkerOnce } from '../../worker-once.ts';
import { CountingLru } from '../../observability/cache-registry.ts';
import { createDatabaseHealthCheck } from './database-health.ts';
import { performanceProtocol, type DiscoveryDocuments } from './documents.ts';

/** What the system routes read: health, readiness, metrics and the server's own description. */
export type SystemDeps = Pick<ServerDeps, 'caches' | 'config' | 'database' | 'lifecycle' | 'log' | 'metrics' | 'publicUrls' | 'startedAt' | 'testSeams'>;

/** A build takes 0.5-0.8 s of its thread plus loading the contract there; this is for a machine under heavy load. */
const DOCUMENTS_DEADLINE_MS = 30_000;

export function createSystemHandlers(deps: SystemDeps) {
  // Documents depend only on the contract and the public URLs: built once per URL pair, in a
  // worker thread, since building them held the event loop 550-830 ms (and /healthz 2.1 s).
  const documents = new CountingLru<string, Promise<DiscoveryDocuments>>(4);
  deps.caches.register({
    name: 'discovery-documents',
    description: 'OpenAPI and llms documents, built once per public URL pair',
    stats: () => documents.stats(),
  });
  const documentsFor = (): Promise<DiscoveryDocuments> => {
    const urls = { ...deps.publicUrls(), consoleEnabled: deps.config.console.enabled };
    const key = `${urls.baseUrl} ${urls.apiUrl}`;
    const cached = documents.get(key);
    if (cached) return cached;
    const built = runWorkerOnce<DiscoveryDocuments>(
      deps.testSeams?.documentsWorkerModule ?? workerModuleUrl('documents-worker'),
      urls,
      DOCUMENTS_DEADLINE_MS,
    ).catch((error: unknown) => {
      // The next request tries again rather than getting this failure for the life of the process.
      documents.deleteIf(key, built);
      deps.log.error({ err: error }, 'building the discovery documents in a worker failed');
      throw new ServiceError('discovery_documents_unavailable', 'The OpenAPI and llms documents could not be built just now; try again shortly.');
    });
    documents.set(key, built);
    return built;
  };

  const databaseHealth = createDatabaseHealthCheck(deps.database);

  const health = async (): Promise<{ status: 200 | 503; body: HealthResponse }> => {
    const database = await databaseHealth.latest();
    const ok = database.status === 'ok';
    return {
      status: ok ? 200 : 503,
      body: {
        status: ok ? 'ok' : 'degraded',
        service: 'svc',
        version: SVC_VERSION,
        uptime_seconds: Math.round((Date.now() - deps.startedAt) / 100) / 10,
        database,
      },
    };
  };

  const handlers = defineHandlers(systemContract, {
    async readyz() {
      // A draining server answers at once, without waiting on the database it is about to close.
      if (deps.lifecycle.draining) return { status: 503, body: { status: 'draining', service: 'svc' } };
      const database = await databaseHealth.fresh();
      return database.status === 'ok'
        ? { status: 200, body: { status: 'ready', service: 'svc', database } }
        : { status: 503, body: { status: 'unavailable', service: 'svc', database } };
    },
    async root() {
      const urls = deps.publicUrls();
      return {
        status: 200,
        body: {
          name: 'svc',
          version: SVC_VERSION,
          api_version: API_VERSION,
          description: 'A self-hostable platform for AI agents: blackboard, artifact catalog, inference, PDF extraction, batch jobs, keys and billing.',
          status: 'ok',
          surfaces: { base: urls.baseUrl, api: urls.apiUrl },
          links: {
            openapi: urlFor(urls, systemContract.openapi),
            health: urlFor(urls, systemContract.healthz),
            llms: urlFor(urls, systemContract.llmsTxt),
            llms_full: urlFor(urls, systemContract.llmsFullTxt),
            performance: urlFor(urls, systemContract.performanceJson),
            api_health: urlFor(urls, systemContract.apiHealth),
            try: tryUrl(urls.baseUrl),
            ...(deps.config.console.enabled ? { console: consoleUrl(urls.baseUrl) } : {}),
            ...discoveryLinks(urls),
          },
        },
      };
    },
    healthz: health,
    health,
    async apiHealth() {
      const { status, body } = await health();
      return { status, body: { status: body.status, surface: 'api', version: body.version, database: body.database } };
    },
    async openapi() {
      return { status: 200, body: (await documentsFor()).openapi as { openapi: string; info: { title: string; version: string } } };
    },
    async llmsTxt() {
      return { status: 200, body: (await documentsFor()).llms };
    },
    async agentsTxt() {
      return { status: 200, body: (await documentsFor()).llms };
    },
    async llmsFullTxt() {
      return { status: 200, body: (await documentsFor()).llmsFull };
    },
    async performance() {
      return { status: 200, body: performanceProtocol() };
    },
    async performanceJson() {
      return { status: 200, body: performanceProtocol() };
    },
    async metrics() {
      return { status: 200, body: await deps.metrics.exposition() };
    },
  });

  // Built on the first read, not at start: the build costs its thread about a second of CPU,
  // which every start (and every test server) would pay for documents most servers never serve.
  return { handlers };
}
