import {
  A2A_AGENT_CARD_PATHS,
  a2aEndpointUrl,
  a2aLimits,
  a2aSkills,
  discoveryContract,
  oauthContract,
  urlFor,
  type A2aAgentCard,
  type A2aEndpointInfo,
  type McpServerCard,
  type Principal,
  type RouteDefinition,
} from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers, withAdmission } from '../../http/handler-types.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { ServiceError } from '../../service-error.ts';
import { answerSkillRequest, holdsInvoke, type SkillRpcDeps } from './a2a-skill-rpc.ts';
import { CountingLru } from '../../observability/cache-registry.ts';
import { answerA2aRequest } from './a2a-rpc.ts';
import { buildTrialTask, type TrialTask } from './a2a-trial.ts';
import { buildAgentCard } from './agent-card.ts';
import { ToolCatalogue } from '../mcp/index.ts';
import { buildApiMcpServerCard, buildBaseMcpServerCard } from './mcp-server-card.ts';
import { tryIt } from './try-it.ts';

/** Public documents: any origin may read them, and caches may keep them a while. */
const PUBLIC_DOCUMENT = { 'access-control-allow-origin': '*', 'cache-control': 'public, max-age=300' };

interface DiscoveryDocuments {
  /** The card of `{base}/mcp`, on the spec's aliases. */
  mcpCard: McpServerCard;
  /** The card of `{api}/api/mcp`, at `{api}/api/mcp/server-card`. */
  apiMcpCard: McpServerCard;
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
      {
        method: 'message/send',
        protocolVersion: '0.3',
        description: 'Send a message; answers the completed public trial task (with a credential: runs the skill it names)',
      },
      { method: 'tasks/get', protocolVersion: '0.3', description: 'Read the public trial task, svc-public-trial-v1 (with a credential: one of your tasks)' },
      { method: 'message/stream', protocolVersion: '0.3', description: 'With a credential: run a skill, its progress and result as server-sent events' },
      { method: 'tasks/cancel', protocolVersion: '0.3', description: 'With a credential: stop one of your running tasks' },
      { method: 'agent/getAuthenticatedExtendedCard', protocolVersion: '0.3', description: 'With a credential: the card listing the skills it may use' },
      {
        method: 'SendMessage',
        protocolVersion: '1.0',
        description: 'Send a message; answers { task } with the completed public trial task (with a credential: runs the skill it names)',
      },
      { method: 'GetTask', protocolVersion: '1.0', description: 'Read the public trial task, svc-public-trial-v1 (with a credential: one of your tasks)' },
      { method: 'SendStreamingMessage', protocolVersion: '1.0', description: 'With a credential: run a skill, its progress and result as server-sent events' },
      { method: 'CancelTask', protocolVersion: '1.0', description: 'With a credential: stop one of your running tasks' },
      { method: 'GetExtendedAgentCard', protocolVersion: '1.0', description: 'With a credential: the card listing the skills it may use' },
    ],
    example: {
      jsonrpc: '2.0',
      id: '1',
      method: 'message/send',
      params: { message: { messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'What is svc?' }] } },
    },
  };
}

/** Whether the principal meets a route's auth requirement, as the adapter would judge it. */
function mayCall(principal: Principal, route: RouteDefinition): boolean {
  const { auth } = route;
  if (auth.kind === 'public') return true;
  if (auth.principals && !auth.principals.includes(principal.kind)) return false;
  if (auth.kind === 'bearer') return principal.credential !== 'developer_key';
  return principal.kind === 'operator' || auth.scopes.every((scope) => principal.scopes.includes(scope));
}

/** A call without a credential is the trial, whose body stays at its own cap: refused from its Content-Length before a byte is read. */
async function trialBodyCap(request: RequestContext): Promise<void> {
  if (request.principal.kind !== 'anonymous') return;
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > a2aLimits.trialBodyBytes)
    throw new ServiceError('payload_too_large', `The body is ${declared} bytes; without a credential this endpoint takes at most ${a2aLimits.trialBodyBytes}.`);
}

/**
 * The discovery documents and the A2A trial. Every document is built from the contract, the
 * configuration's public URLs and the MCP endpoint's own tool list, once per URL pair, and served
 * as the same object on every alias, so the aliases are byte-identical.
 */
export function createDiscoveryHandlers(
  deps: Pick<ServerDeps, 'caches' | 'database' | 'models' | 'publicUrls' | 'startedAt' | 'usage'>,
  a2a: Pick<SkillRpcDeps, 'runner'>,
) {
  const built = new CountingLru<string, DiscoveryDocuments>(4);
  deps.caches.register({
    name: 'discovery-cards',
    description: 'MCP server card, A2A agent card and trial task, built once per public URL pair',
    stats: () => built.stats(),
  });
  const startedAt = new Date(deps.startedAt).toISOString();
  const tools = new ToolCatalogue();
  const documents = (): DiscoveryDocuments => {
    const urls = deps.publicUrls();
    const key = `${urls.baseUrl} ${urls.apiUrl}`;
    let entry = built.get(key);
    if (!entry) {
      entry = {
        mcpCard: buildBaseMcpServerCard(urls, tools),
        apiMcpCard: buildApiMcpServerCard(urls),
        agentCard: buildAgentCard(urls),
        a2aInfo: a2aInfo(urls),
        trial: buildTrialTask(urls, startedAt),
      };
      built.set(key, entry);
    }
    return entry;
  };
  const mcpCard = async () => ({ status: 200 as const, headers: PUBLIC_DOCUMENT, body: documents().mcpCard });
  const apiMcpCard = async () => ({ status: 200 as const, headers: PUBLIC_DOCUMENT, body: documents().apiMcpCard });
  const agentCard = async () => ({ status: 200 as const, headers: PUBLIC_DOCUMENT, body: documents().agentCard });
  const skillRpc: SkillRpcDeps = {
    ...a2a,
    trial: () => documents().trial,
    extendedCard: (principal) =>
      buildAgentCard(
        deps.publicUrls(),
        (skillId) => holdsInvoke(principal) && a2aSkills.some((skill) => skill.id === skillId && mayCall(principal, skill.route)),
      ),
    challenge: (error) =>
      `Bearer realm="svc", resource_metadata="${urlFor(deps.publicUrls(), oauthContract.protectedResource)}"${error ? `, error="${error}"` : ''}`,
  };
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
    mcpEndpointServerCard: apiMcpCard,
    agentCard,
    agentJson: agentCard,
    agentDirectoryWellKnown: agentCard,
    agentDirectory: agentCard,
    agentsWellKnown: agentCard,
    agents: agentCard,
    async a2aInfo() {
      return { status: 200, headers: { ...PUBLIC_DOCUMENT, link: `<${documents().a2aInfo.agentCard}>; rel="describedby"` }, body: documents().a2aInfo };
    },
    // No credential: the fixed trial (spec 4.9). A credential: the skills, as stored tasks.
    a2a: withAdmission(trialBodyCap, async ({ body, headers }, request) => {
      if (request.bearer === undefined) return answerA2aRequest(body, headers['a2a-version'], documents().trial, request.requestId);
      return answerSkillRequest(skillRpc, body, headers['a2a-version'], request);
    }),
  });
}
