import type { Feature } from '../feature.ts';
import type { Tasks } from '../tasks/index.ts';
import { createBaseMcpEndpoint, type McpEndpointDeps } from './endpoint.ts';

export { MCP_BASE_SERVER_NAME, MCP_BASE_SERVER_TITLE } from './endpoint.ts';
export { ToolCatalogue } from './tool-calls.ts';

/** The base-surface MCP endpoint: the contract's agent-callable operations as tools, run through the REST routes. */
export function createMcpFeature(deps: McpEndpointDeps, given: { tasks: Tasks }) {
  const handle = createBaseMcpEndpoint(deps, given);
  return {
    handlers: {
      mcp: {
        async endpoint({ body }, request) {
          return handle(body, request);
        },
      },
    },
  } satisfies Feature<'mcp'>;
}
