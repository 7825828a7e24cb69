import { z } from 'zod';
import { defineContract, defineRoute, jsonOrSse } from '../route.ts';
import { A2aAgentCard, A2aEndpointInfo } from './a2a-card.ts';
import { JsonRpcError } from '../errors.ts';
import { A2aJsonRpcRequest, A2aJsonRpcSuccess, A2aStreamEvent } from './a2a-rpc.ts';
import { a2aLimits, a2aSkills } from './a2a-skills.ts';
import { McpServerCard } from './mcp-server-card.ts';
import { TRY_CALLS_PER_MINUTE, TryResponse } from './try.ts';
import { TRY_PATH } from './urls.ts';

const discovery = { auth: { kind: 'public' }, surface: 'base', tags: ['discovery'] } as const;

const MCP_CARD_DESCRIPTION =
  "The card of the base-surface MCP endpoint {base}/mcp, whose tools are the API's agent operations. The same bytes on every alias (/.well-known/mcp/server-card.json, /.well-known/mcp.json, /.well-known/mcp, /mcp.json, /mcp/.well-known/mcp.json, /mcp/.well-known/mcp). Readable from any origin.";
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
    summary: 'MCP server card of {api}/api/mcp (the blackboard tool) at the location the newer draft reserves, <mcp endpoint>/server-card',
    description: "The card of the blackboard's MCP endpoint {api}/api/mcp and its one tool, blackboard. Readable from any origin.",
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
    summary:
      'A2A JSON-RPC (1.0 and 0.3): the public trial task svc-public-trial-v1 without a credential; with one holding inference:invoke, the skills of the agent card, tasks stored per caller',
    description:
      'Without a credential (spec 4.9): every message is answered with the same completed task, `svc-public-trial-v1`, whose reply says what svc is and how to start: nothing the caller sends is run or stored, so a retry is always safe. ' +
      'The method name picks the version: `message/send` and `tasks/get` answer A2A 0.3 (`kind` members, lower-case states, the task itself as result); `SendMessage` and `GetTask` answer A2A 1.0 (`{ task }` from SendMessage, ROLE_/TASK_STATE_ enums, no `kind`). ' +
      'A 1.0 request may carry `A2A-Version: 1.0`; any version other than 1.0 or 0.3 is -32009. ' +
      `Without a credential the body is at most ${a2aLimits.trialBodyBytes} bytes (413). ` +
      "With a bearer or developer key holding `inference:invoke`: `message/send`/`SendMessage` and `message/stream`/`SendStreamingMessage` (server-sent events of JSON-RPC responses: the task, then artifact and status updates, the last `final`) run the skill named in `message.metadata.skill` or in a data part's `skill` member " +
      `(${a2aSkills.map((skill) => skill.id).join(', ')}). Each skill is its REST route called in-process with the caller's credential: the same auth, funding, limits and errors, and the artifact's data part is the REST answer. ` +
      'A message with no skill named gets the trial task. An unknown skill is -32602 naming the known ones. A skill whose route answers an error ends its task `failed`, the REST error body as a data part of the status message; a retry runs a new task. ' +
      `Tasks are stored per caller in the database (\`tasks/get\`/\`GetTask\` on any replica, another caller's task is -32001), kept as the durable task store keeps a result (\`SVC_TASKS_RESULT_TTL_SECONDS\`, ${a2aLimits.retentionHours} h by default) and at most ${a2aLimits.maxKeptPerPrincipal} per caller. ` +
      `\`tasks/cancel\`/\`CancelTask\` stops a running task and aborts its work; a finished one is -32002. At most ${a2aLimits.maxRunningPerPrincipal} running tasks per caller (429), each within ${a2aLimits.taskDeadlineMs / 1000} s. ` +
      '`agent/getAuthenticatedExtendedCard` (0.3) and `GetExtendedAgentCard` (1.0) answer the card listing the skills this credential may use. ' +
      `With a credential the body is at most ${a2aLimits.bodyBytes} bytes. An invalid credential is 401; one without inference:invoke is 403. ` +
      'Errors are JSON-RPC error bodies: 400 for a body that is not JSON (-32700), not a JSON-RPC request (-32600) or has the wrong params (-32602); ' +
      '404 for another method (-32601) or an unknown task (-32001). `error.data.code` is the svc error code.',
    headers: z.looseObject({ 'a2a-version': z.string().max(16).optional().describe('A2A protocol version of the request: 1.0 or 0.3') }),
    body: A2aJsonRpcRequest,
    bodyLimitBytes: a2aLimits.bodyBytes,
    errorEnvelope: 'jsonrpc',
    errors: [413, 429],
    responses: {
      200: jsonOrSse(A2aJsonRpcSuccess, A2aStreamEvent),
      400: JsonRpcError,
      401: JsonRpcError,
      403: JsonRpcError,
      404: JsonRpcError,
      409: JsonRpcError,
      429: JsonRpcError,
    },
  }),
});
