import { z } from 'zod';

/** The newer draft's schema URI (modelcontextprotocol/experimental-ext-server-card, SEP-2127). */
export const MCP_SERVER_CARD_SCHEMA_URI = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';

const McpCardTool = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  annotations: z.record(z.string(), z.unknown()).optional(),
});

const McpCardRemote = z.looseObject({
  type: z.literal('streamable-http'),
  url: z.string(),
  supportedProtocolVersions: z.array(z.string()),
});

/**
 * The MCP server card. The upstream shape is still a draft, so one body satisfies both drafts:
 * SEP-2127's required members (`$schema`, reverse-DNS `name`, `version`, a description of at most
 * 100 characters, `remotes`) and SEP-1649's (`serverInfo`, `transport`, `capabilities`, `tools`
 * with their input schemas, `authentication`). One card per endpoint: the spec's aliases describe
 * the base-surface `{base}/mcp` (the API's agent operations as tools, listed as `tools/list` shows
 * them to a caller without a credential), `{api}/api/mcp/server-card` the blackboard's
 * `{api}/api/mcp`. Names of the OAuth documents point at where they really are; connecting needs no
 * credential (`authentication.required` is false): a tool that needs one says so with a 401.
 */
export const McpServerCard = z
  .looseObject({
    $schema: z.literal(MCP_SERVER_CARD_SCHEMA_URI),
    name: z.string().regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/),
    version: z.string(),
    description: z.string().min(1).max(100),
    title: z.string().min(1).max(100),
    websiteUrl: z.string(),
    remotes: z.array(McpCardRemote).min(1),
    serverInfo: z.object({ name: z.string(), title: z.string(), version: z.string() }),
    protocolVersion: z.string(),
    supportedProtocolVersions: z.array(z.string()),
    transport: z.object({ type: z.literal('streamable-http'), endpoint: z.string() }),
    capabilities: z.looseObject({ tools: z.looseObject({ listChanged: z.boolean() }) }),
    tools: z.array(McpCardTool),
    authentication: z.object({
      required: z.boolean(),
      schemes: z.array(z.string()),
      protectedResourceMetadata: z.string(),
      authorizationServerMetadata: z.string(),
      authorizationServers: z.array(z.string()),
    }),
    documentation: z.string(),
  })
  .meta({ id: 'McpServerCard' });
export type McpServerCard = z.infer<typeof McpServerCard>;
