/** Where the MCP endpoint lives on the api surface (blackboard contract, `blackboard.mcp`). */
export const MCP_ENDPOINT_PATH = '/api/mcp';
/** The MCP endpoint on the base surface, whose tools are the contract's operations (`{base}/mcp`). */
export const BASE_MCP_ENDPOINT_PATH = '/mcp';
/** The A2A JSON-RPC endpoint on the base surface. */
export const A2A_ENDPOINT_PATH = '/a2a';

/** The zero-credential activation proof on the base surface (discovery contract, `discovery.try`). */
export const TRY_PATH = '/v1/try';

export const tryUrl = (baseUrl: string) => `${baseUrl}${TRY_PATH}`;
export const mcpEndpointUrl = (apiUrl: string) => `${apiUrl}${MCP_ENDPOINT_PATH}`;
export const baseMcpEndpointUrl = (baseUrl: string) => `${baseUrl}${BASE_MCP_ENDPOINT_PATH}`;
export const a2aEndpointUrl = (baseUrl: string) => `${baseUrl}${A2A_ENDPOINT_PATH}`;

/** Every path serving the MCP server card on the base surface; the bodies are byte-identical. */
export const MCP_SERVER_CARD_PATHS = [
  '/.well-known/mcp/server-card.json',
  '/.well-known/mcp.json',
  '/.well-known/mcp',
  '/mcp.json',
  '/mcp/.well-known/mcp.json',
  '/mcp/.well-known/mcp',
] as const;
/** The newer draft's reserved location, `<streamable-http-url>/server-card`, on the api surface. */
export const MCP_ENDPOINT_SERVER_CARD_PATH = `${MCP_ENDPOINT_PATH}/server-card`;
/** Every path serving the A2A agent card; the bodies are byte-identical. */
export const A2A_AGENT_CARD_PATHS = [
  '/.well-known/agent-card.json',
  '/.well-known/agent.json',
  '/.well-known/agent-directory.json',
  '/agent-directory.json',
  '/.well-known/agents.json',
  '/agents.json',
] as const;

/** The discovery documents every pointer (/, llms.txt, llms-full.txt, OpenAPI) links, by name. */
export function discoveryLinks(urls: { baseUrl: string; apiUrl: string }) {
  return {
    mcp_server_card: `${urls.baseUrl}${MCP_SERVER_CARD_PATHS[0]}`,
    mcp_endpoint: mcpEndpointUrl(urls.apiUrl),
    agent_card: `${urls.baseUrl}${A2A_AGENT_CARD_PATHS[0]}`,
    a2a: a2aEndpointUrl(urls.baseUrl),
    oauth_authorization_server: `${urls.baseUrl}/.well-known/oauth-authorization-server`,
    oauth_protected_resource: `${urls.baseUrl}/.well-known/oauth-protected-resource`,
  };
}
