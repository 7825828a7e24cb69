import { McpJsonRpcBody, mcpEndpointResponses } from '../blackboard/mcp.ts';
import { defineContract, defineRoute } from '../route.ts';
import { mcpBatchDescription } from './batch-rules.ts';

/** The base-surface MCP endpoint: every agent-callable contract operation as a tool (agent-tools.ts). */
export const mcpContract = defineContract({
  endpoint: defineRoute({
    method: 'POST',
    path: '/mcp',
    surface: 'base',
    // Each tool is authorized as its REST route is; the endpoint itself is open (initialize, tools/list).
    auth: { kind: 'public' },
    tags: ['mcp'],
    summary: "MCP endpoint (Streamable HTTP, stateless): the contract's agent-callable operations as tools, with REST's auth, validation and answers",
    description:
      'Speak MCP with an MCP client (Accept: application/json, text/event-stream), revisions 2026-07-28 and 2025-11-25. A tool is named by its contract key path ' +
      "(`inference_rerank`, `catalog_search`, `jobs_submit`); its input is the route's path params, query and body as one object, its `structuredContent` the JSON the REST route answers. " +
      '`tools/list` lists every tool to a caller without a credential (calling one that needs a credential starts OAuth) and, to a caller with one, only the tools that credential may call. ' +
      'A tool that needs a credential, called without one, answers 401 with `WWW-Authenticate: Bearer resource_metadata=".../.well-known/oauth-protected-resource/mcp"`; ' +
      'a credential lacking the scope answers 403 with `error="insufficient_scope"` and the scope. A REST error of a tool (422, 404, 429...) is a tool result with `isError` and the REST error body. ' +
      mcpBatchDescription,
    body: McpJsonRpcBody,
    errorEnvelope: 'jsonrpc',
    agent: { callable: false, reason: 'the MCP endpoint itself' },
    responses: mcpEndpointResponses,
  }),
});
