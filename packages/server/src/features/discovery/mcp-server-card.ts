import {
  anonymousPrincipal,
  MCP_SERVER_CARD_SCHEMA_URI,
  mcpContract,
  mcpEndpointUrl,
  oauthContract,
  SVC_VERSION,
  systemContract,
  urlFor,
  type McpServerCard,
} from '@svc/schemas';
import { describeMcpTools, MCP_SERVER_NAME, MCP_SERVER_TITLE, MCP_SUPPORTED_REVISIONS, MODERN_MCP_REVISION } from '../blackboard/index.ts';
import { MCP_BASE_SERVER_NAME, MCP_BASE_SERVER_TITLE, type ToolCatalogue } from '../mcp/index.ts';

/**
 * The card's reverse-DNS `name` from a public host (`api.example.com` gives
 * `com.example.api/<server>`), so two svc deployments never share a name. An address or a
 * single-label host (`127.0.0.1`, `localhost`) is used as it is.
 */
export function serverCardName(publicUrl: string, server: string = MCP_SERVER_NAME): string {
  const host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '');
  const isAddress = /^[\d.]+$/.test(host) || host.includes(':');
  const namespace = isAddress || !host.includes('.') ? host.replace(/:/g, '-') : host.split('.').reverse().join('.');
  return `${namespace}/${server}`;
}

/** What differs between the two endpoints' cards. */
interface CardOf {
  publicUrl: string;
  endpoint: string;
  server: { name: string; title: string };
  description: string;
  capabilities: McpServerCard['capabilities'];
  tools: McpServerCard['tools'];
  protectedResourceMetadata: string;
}

function card(urls: { baseUrl: string; apiUrl: string }, of: CardOf): McpServerCard {
  return {
    $schema: MCP_SERVER_CARD_SCHEMA_URI,
    name: serverCardName(of.publicUrl, of.server.name),
    version: SVC_VERSION,
    description: of.description,
    title: of.server.title,
    websiteUrl: urls.baseUrl,
    remotes: [{ type: 'streamable-http', url: of.endpoint, supportedProtocolVersions: [...MCP_SUPPORTED_REVISIONS] }],
    serverInfo: { ...of.server, version: SVC_VERSION },
    protocolVersion: MODERN_MCP_REVISION,
    supportedProtocolVersions: [...MCP_SUPPORTED_REVISIONS],
    transport: { type: 'streamable-http', endpoint: of.endpoint },
    capabilities: of.capabilities,
    tools: of.tools,
    authentication: {
      required: false,
      schemes: ['bearer'],
      protectedResourceMetadata: of.protectedResourceMetadata,
      authorizationServerMetadata: urlFor(urls, oauthContract.authorizationServer),
      authorizationServers: [urls.baseUrl],
    },
    documentation: urlFor(urls, systemContract.llmsTxt),
  };
}

/**
 * The card of the base-surface endpoint `{base}/mcp`, served at `/.well-known/mcp/server-card.json`
 * and its aliases (spec 4.9): its tools are the contract's agent-callable operations as
 * `tools/list` shows them to a caller without a credential (every tool; with a credential the
 * list is what it may call). No credential is needed to connect; a tool that needs one answers 401
 * naming the protected-resource metadata below.
 */
export function buildBaseMcpServerCard(urls: { baseUrl: string; apiUrl: string }, catalogue: ToolCatalogue): McpServerCard {
  return card(urls, {
    publicUrl: urls.baseUrl,
    endpoint: urlFor(urls, mcpContract.endpoint),
    server: { name: MCP_BASE_SERVER_NAME, title: MCP_BASE_SERVER_TITLE },
    description: 'Every agent operation of svc as an MCP tool: catalog, inference, PDF, jobs, requests, billing.',
    capabilities: { tools: { listChanged: false }, resources: {} },
    tools: catalogue.listFor(anonymousPrincipal).map((tool) => ({ ...tool })),
    protectedResourceMetadata: urlFor(urls, oauthContract.protectedResourceMcp),
  });
}

/**
 * The card of the blackboard's endpoint `{api}/api/mcp` and its one tool, at the location the
 * newer draft reserves for it (`{api}/api/mcp/server-card`).
 */
export function buildApiMcpServerCard(urls: { baseUrl: string; apiUrl: string }): McpServerCard {
  return card(urls, {
    publicUrl: urls.apiUrl,
    endpoint: mcpEndpointUrl(urls.apiUrl),
    server: { name: MCP_SERVER_NAME, title: MCP_SERVER_TITLE },
    description: 'Public svc blackboard for agents: post, read, query and retract shared notes with one tool.',
    capabilities: { tools: { listChanged: false } },
    tools: describeMcpTools(),
    protectedResourceMetadata: urlFor(urls, oauthContract.protectedResourceApiMcp),
  });
}
