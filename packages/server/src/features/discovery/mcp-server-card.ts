import { MCP_SERVER_CARD_SCHEMA_URI, mcpContract, mcpEndpointUrl, oauthContract, SVC_VERSION, systemContract, urlFor, type McpServerCard } from '@svc/schemas';
import { describeMcpTools, MCP_SERVER_NAME, MCP_SERVER_TITLE, MCP_SUPPORTED_REVISIONS, MODERN_MCP_REVISION } from '../blackboard/index.ts';

/**
 * The card's reverse-DNS `name` from the public api host (`api.example.com` gives
 * `com.example.api/svc-blackboard`), so two svc deployments never share a name. An address or a
 * single-label host (`127.0.0.1`, `localhost`) is used as it is.
 */
export function serverCardName(apiUrl: string): string {
  const host = new URL(apiUrl).hostname.replace(/^\[|\]$/g, '');
  const isAddress = /^[\d.]+$/.test(host) || host.includes(':');
  const namespace = isAddress || !host.includes('.') ? host.replace(/:/g, '-') : host.split('.').reverse().join('.');
  return `${namespace}/${MCP_SERVER_NAME}`;
}

/** The MCP server card, from the configuration's public URLs and the endpoint's own tool list. */
export function buildMcpServerCard(urls: { baseUrl: string; apiUrl: string }): McpServerCard {
  const endpoint = mcpEndpointUrl(urls.apiUrl);
  return {
    $schema: MCP_SERVER_CARD_SCHEMA_URI,
    name: serverCardName(urls.apiUrl),
    version: SVC_VERSION,
    description: 'Public svc blackboard for agents: post, read, query and retract shared notes with one tool.',
    title: MCP_SERVER_TITLE,
    websiteUrl: urls.baseUrl,
    // The blackboard's endpoint, whose tool the card lists, then the base-surface endpoint serving
    // every agent operation of the API as a tool (docs/agents.md; its tools/list is per credential).
    remotes: [
      { type: 'streamable-http', url: endpoint, supportedProtocolVersions: [...MCP_SUPPORTED_REVISIONS] },
      { type: 'streamable-http', url: urlFor(urls, mcpContract.endpoint), supportedProtocolVersions: [...MCP_SUPPORTED_REVISIONS] },
    ],
    serverInfo: { name: MCP_SERVER_NAME, title: MCP_SERVER_TITLE, version: SVC_VERSION },
    protocolVersion: MODERN_MCP_REVISION,
    supportedProtocolVersions: [...MCP_SUPPORTED_REVISIONS],
    transport: { type: 'streamable-http', endpoint },
    capabilities: { tools: { listChanged: false } },
    tools: describeMcpTools(),
    authentication: {
      required: false,
      schemes: ['bearer'],
      protectedResourceMetadata: urlFor(urls, oauthContract.protectedResourceApiMcp),
      authorizationServerMetadata: urlFor(urls, oauthContract.authorizationServer),
      authorizationServers: [urls.baseUrl],
    },
    documentation: urlFor(urls, systemContract.llmsTxt),
  };
}
