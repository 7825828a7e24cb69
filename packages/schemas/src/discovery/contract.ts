import { z } from 'zod';
import { defineContract, defineRoute } from '../route.ts';
import { A2aAgentCard, A2aEndpointInfo } from './a2a-card.ts';
import { JsonRpcError } from '../errors.ts';
import { A2aJsonRpcRequest, A2aJsonRpcSuccess } from './a2a-rpc.ts';
import { McpServerCard } from './mcp-server-card.ts';
import { TRY_CALLS_PER_MINUTE, TryResponse } from './try.ts';
import { TRY_PATH } from './urls.ts';

const discovery = { auth: { kind: 'public' }, surface: 'base', tags: ['discovery'] } as const;

const MCP_CARD_DESCRIPTION =
  'The same bytes on every alias (/.well-known/mcp/server-card.json, /.well-known/mcp.json, /.well-known/mcp, /mcp.json, /mcp/.well-known/mcp.json, /mcp/.well-known/mcp, and {api}/api/mcp/server-card). Readable from any origin.';
const mcpCard = (path: string, summary: string) =>
  defineRoute({ ...discovery, method: 'GET', path, summary, description: MCP_CARD_DESCRIPTION, responses: { 200: McpServerCard } });

const AGENT_CARD_DESCRIPTION =
  'The same bytes on every alias (/.well-known/agent-card.json, /.well-known/agent.json, /.well-known/agent-directory.json, /agent-directory.json, /.well-known/agents.json, /agents.json), valid for A2A 1.0 and 0.3 readers alike. Readable from any origin.';
const agentCard = (path: string, summary: string) =>
  defineRoute({ ...discovery, method: 'GET', path, summary, description: AGENT_CARD_DESCRIPTION, responses: { 200: A2aAgentCard } });

export const discoveryContract = defineContract({
  try: defineRoute({
    ...discovery,
    method: 'GET',
    path: TRY_PATH,
    summary: 'Zero-credential activation proof: a fixed built-in operation with its result and timings, and how to go on',
    description:
      `Runs a fixed rerank on the built-in engine (BM25): no caller-controlled compute, so any query parameter is refused with 422. At most ${TRY_CALLS_PER_MINUTE} calls a minute per address ` +
      '(429 `rate_limited` with Retry-After). The answer names the credential route and the calls to make next.',
    query: z.strictObject({}),
    errors: [429],
    responses: { 200: TryResponse },
  }),
  mcpServerCard: mcpCard(
    '/.well-known/mcp/server-card.json',
    'MCP server card: name, version, the Streamable HTTP endpoint, protocol revisions, tools with input schemas, OAuth metadata',
  ),
  mcpJson: mcpCard('/.well-known/mcp.json', 'MCP server card (alias)'),
  mcpWellKnown: mcpCard('/.well-known/mcp', 'MCP server card (alias)'),
  mcpRootJson: mcpCard('/mcp.json', 'MCP server card (alias)'),
  mcpPrefixedJson: mcpCard('/mcp/.well-known/mcp.json', 'MCP server card (alias)'),
  mcpPrefixed: mcpCard('/mcp/.well-known/mcp', 'MCP server card (alias)'),
  mcpEndpointServerCard: defineRoute({
    ...discovery,
    surface: 'api',
    method: 'GET',
    path: '/api/mcp/server-card',
    summary: 'MCP server card at the location the newer draft reserves, <mcp endpoint>/server-card',
    description: MCP_CARD_DESCRIPTION,
    responses: { 200: McpServerCard },
  }),
  agentCard: agentCard(
    '/.well-known/agent-card.json',
    'A2A agent card: protocol versions, the /a2a URL and transport, capabilities, modes, skills, security schemes',
  ),
  agentJson: agentCard('/.well-known/agent.json', 'A2A agent card (alias)'),
  agentDirectoryWellKnown: agentCard('/.well-known/agent-directory.json', 'A2A agent card (alias)'),
  agentDirectory: agentCard('/agent-directory.json', 'A2A agent card (alias)'),
  agentsWellKnown: agentCard('/.well-known/agents.json', 'A2A agent card (alias)'),
  agents: agentCard('/agents.json', 'A2A agent card (alias)'),
  a2aInfo: defineRoute({
    ...discovery,
    method: 'GET',
    path: '/a2a',
    summary: 'A2A compatibility answer for crawlers probing the RPC URL: where the agent card is and how to call',
    responses: { 200: A2aEndpointInfo },
  }),
  a2a: defineRoute({
    ...discovery,
    method: 'POST',
    path: '/a2a',
    summary: 'A2A JSON-RPC: message/send and tasks/get (0.3), SendMessage and GetTask (1.0); answers the public trial task svc-public-trial-v1',
    description:
      'No credential. Every message is answered with the same completed task, `svc-public-trial-v1`, whose reply says what svc is and how to start: nothing the caller sends is run or stored, so a retry is always safe. ' +
      'The method name picks the version: `message/send` and `tasks/get` answer A2A 0.3 (`kind` members, lower-case states, the task itself as result); `SendMessage` and `GetTask` answer A2A 1.0 (`{ task }` from SendMessage, ROLE_/TASK_STATE_ enums, no `kind`). ' +
      'A 1.0 request may carry `A2A-Version: 1.0`; any version other than 1.0 or 0.3 is -32009. ' +
      'Errors are JSON-RPC error bodies: 400 for a body that is not JSON (-32700), not a JSON-RPC request (-32600) or has the wrong params (-32602: role other than user, parts other than text); ' +
      '404 for another method (-32601) or a task id other than the trial (-32001). `error.data.code` is the svc error code.',
    headers: z.looseObject({ 'a2a-version': z.string().max(16).optional().describe('A2A protocol version of the request: 1.0 or 0.3') }),
    body: A2aJsonRpcRequest,
    bodyLimitBytes: 65_536,
    errorEnvelope: 'jsonrpc',
    responses: { 200: A2aJsonRpcSuccess, 400: JsonRpcError, 404: JsonRpcError },
  }),
});
