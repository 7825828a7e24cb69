import { API_VERSION, buildOpenApiDocument, contract, discoveryLinks, SVC_VERSION, systemContract, type HealthResponse } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { CountingLru } from '../models/cache-registry.ts';
import { llmsFullTxt, llmsTxt, performanceProtocol } from './documents.ts';

/** What the OpenAPI document points an agent to, beside its operations. */
function openApiDiscovery(urls: { baseUrl: string; apiUrl: string }) {
  const links = discoveryLinks(urls);
  return { llms: `${urls.baseUrl}/llms.txt`, mcp_server_card: links.mcp_server_card, mcp_endpoint: links.mcp_endpoint, agent_card: links.agent_card, a2a: links.a2a, oauth_authorization_server: links.oauth_authorization_server };
}

export function createSystemHandlers(deps: ServerDeps) {
  // Documents depend only on the contract and the public URLs: build once per URL pair.
  const documents = new CountingLru<string, { openapi: Record<string, unknown>; llms: string; llmsFull: string }>(4);
  deps.caches.register({ name: 'discovery-documents', description: 'OpenAPI and llms documents, built once per public URL pair', stats: () => documents.stats() });
  const documentsFor = () => {
    const urls = deps.publicUrls();
    const key = `${urls.baseUrl} ${urls.apiUrl}`;
    let built = documents.get(key);
    if (!built) {
      built = {
        openapi: buildOpenApiDocument(contract, {
          version: API_VERSION,
          baseUrl: urls.baseUrl,
          apiUrl: urls.apiUrl,
          description: `svc ${SVC_VERSION}: one contract, every endpoint. Agents: see x-svc-discovery for the MCP server card, the A2A agent card and OAuth metadata.`,
          discovery: openApiDiscovery(urls),
        }),
        llms: llmsTxt(urls),
        llmsFull: llmsFullTxt(contract, urls),
      };
      documents.set(key, built);
    }
    return built;
  };

  const databaseHealth = async (): Promise<HealthResponse['database']> => {
    try {
      const latency = await deps.database.ping();
      return { status: 'ok', kind: deps.database.kind, latency_ms: Math.round(latency * 10) / 10 };
    } catch {
      return { status: 'unreachable', kind: deps.database.kind, latency_ms: 0 };
    }
  };

  const health = async (): Promise<{ status: 200 | 503; body: HealthResponse }> => {
    const database = await databaseHealth();
    const ok = database.status === 'ok';
    return {
      status: ok ? 200 : 503,
      body: { status: ok ? 'ok' : 'degraded', service: 'svc', version: SVC_VERSION, uptime_seconds: Math.round((Date.now() - deps.startedAt) / 100) / 10, database },
    };
  };

  return defineHandlers(systemContract, {
    async readyz() {
      // A draining server answers at once, without waiting on the database it is about to close.
      if (deps.lifecycle.draining) return { status: 503, body: { status: 'draining', service: 'svc' } };
      const database = await databaseHealth();
      return database.status === 'ok' ? { status: 200, body: { status: 'ready', service: 'svc', database } } : { status: 503, body: { status: 'unavailable', service: 'svc', database } };
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
            openapi: `${urls.baseUrl}/openapi.json`,
            health: `${urls.baseUrl}/healthz`,
            llms: `${urls.baseUrl}/llms.txt`,
            llms_full: `${urls.baseUrl}/llms-full.txt`,
            performance: `${urls.baseUrl}/.well-known/performance.json`,
            api_health: `${urls.apiUrl}/api/health`,
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
      return { status: 200, body: documentsFor().openapi as { openapi: string; info: { title: string; version: string } } };
    },
    async llmsTxt() {
      return { status: 200, body: documentsFor().llms };
    },
    async agentsTxt() {
      return { status: 200, body: documentsFor().llms };
    },
    async llmsFullTxt() {
      return { status: 200, body: documentsFor().llmsFull };
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
}
