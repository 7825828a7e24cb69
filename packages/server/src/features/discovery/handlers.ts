import { A2A_AGENT_CARD_PATHS, a2aEndpointUrl, discoveryContract, type A2aAgentCard, type A2aEndpointInfo, type McpServerCard } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { CountingLru } from '../../observability/cache-registry.ts';
import { answerA2aRequest } from './a2a-rpc.ts';
import { buildTrialTask, type TrialTask } from './a2a-trial.ts';
import { buildAgentCard } from './agent-card.ts';
import { buildMcpServerCard } from './mcp-server-card.ts';
import { tryIt } from './try-it.ts';

/** Public documents: any origin may read them, and caches may keep them a while. */
const PUBLIC_DOCUMENT = { 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=300' };

interface DiscoveryDocuments {
  mcpCard: McpServerCard;
  agentCard: A2aAgentCard;
  a2aInfo: A2aEndpointInfo;
  trial: TrialTask;
}

function a2aInfo(urls: { baseUrl: string }): A2aEndpointInfo {
  const endpoint = a2aEndpointUrl(urls.baseUrl);
  return {
    name: 'svc',
    description: 'This is the A2A JSON-RPC endpoint of svc. POST a JSON-RPC 2.0 request here; the agent card says the rest.',
    protocol: 'A2A',
    protocolVersions: ['1.0', '0.3'],
    transport: 'JSONRPC',
    endpoint: { method: 'POST', url: endpoint, contentType: 'application/json' },
    agentCard: `${urls.baseUrl}${A2A_AGENT_CARD_PATHS[0]}`,
    agentCardAliases: A2A_AGENT_CARD_PATHS.slice(1).map((path) => `${urls.baseUrl}${path}`),
    methods: [
      { method: 'message/send', protocolVersion: '0.3', description: 'Send a message; answers the completed public trial task' },
      { method: 'tasks/get', protocolVersion: '0.3', description: 'Read the public trial task, svc-public-trial-v1' },
      { method: 'SendMessage', protocolVersion: '1.0', description: 'Send a message; answers { task } with the completed public trial task' },
      { method: 'GetTask', protocolVersion: '1.0', description: 'Read the public trial task, svc-public-trial-v1' },
    ],
    example: {
      jsonrpc: '2.0',
      id: '1',
      method: 'message/send',
      params: { message: { messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'What is svc?' }] } },
    },
  };
}

/**
 * The discovery documents and the A2A trial. Every document is built from the contract, the
 * configuration's public URLs and the MCP endpoint's own tool list, once per URL pair, and served
 * as the same object on every alias, so the aliases are byte-identical.
 */
export function createDiscoveryHandlers(deps: ServerDeps) {
  const built = new CountingLru<string, DiscoveryDocuments>(4);
  deps.caches.register({
    name: 'discovery-cards',
    description: 'MCP server card, A2A agent card and trial task, built once per public URL pair',
    stats: () => built.stats(),
  });
  const startedAt = new Date(deps.startedAt).toISOString();
  const documents = (): DiscoveryDocuments => {
    const urls = deps.publicUrls();
    const key = `${urls.baseUrl} ${urls.apiUrl}`;
    let entry = built.get(key);
    if (!entry) {
      entry = { mcpCard: buildMcpServerCard(urls), agentCard: buildAgentCard(urls), a2aInfo: a2aInfo(urls), trial: buildTrialTask(urls, startedAt) };
      built.set(key, entry);
    }
    return entry;
  };
  const mcpCard = async () => ({ status: 200 as const, headers: PUBLIC_DOCUMENT, body: documents().mcpCard });
  const agentCard = async () => ({ status: 200 as const, headers: PUBLIC_DOCUMENT, body: documents().agentCard });
  return defineHandlers(discoveryContract, {
    async try(_input, request) {
      return { status: 200, body: await tryIt(deps, request) };
    },
    mcpServerCard: mcpCard,
    mcpJson: mcpCard,
    mcpWellKnown: mcpCard,
    mcpRootJson: mcpCard,
    mcpPrefixedJson: mcpCard,
    mcpPrefixed: mcpCard,
    mcpEndpointServerCard: mcpCard,
    agentCard,
    agentJson: agentCard,
    agentDirectoryWellKnown: agentCard,
    agentDirectory: agentCard,
    agentsWellKnown: agentCard,
    agents: agentCard,
    async a2aInfo() {
      return { status: 200, headers: { ...PUBLIC_DOCUMENT, link: `<${documents().a2aInfo.agentCard}>; rel="describedby"` }, body: documents().a2aInfo };
    },
    async a2a({ body, headers }, request) {
      return answerA2aRequest(body, headers['a2a-version'], documents().trial, request.requestId);
    },
  });
}
