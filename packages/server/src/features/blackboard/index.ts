import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import type { Receipts } from '../receipts/index.ts';
import { createBlackboardHandlers } from './handlers.ts';
import { createBlackboardService } from './service.ts';

export type { BlackboardService } from './service.ts';
export { describeMcpTools, MCP_SERVER_NAME, MCP_SERVER_TITLE } from './mcp.ts';
export { BatchCallNotRun, batchGateFor, McpBatchGate } from './mcp-batch.ts';
export { MCP_SUPPORTED_REVISIONS, MODERN_MCP_REVISION, precheckMcpRequest } from './mcp-precheck.ts';
export { screenValue } from './screening.ts';

/** The public blackboard: its REST routes over one service, its MCP tool over those routes (the dispatcher), and the housekeeping that prunes it. */
export function createBlackboardFeature(deps: ServerDeps, given: { receipts: Receipts }) {
  const service = createBlackboardService(deps.database, deps.config.blackboard, given.receipts);
  for (const [name, task] of Object.entries(service.housekeeping)) deps.scheduler.every(`blackboard.${name}`, 10 * 60_000, task);
  return { handlers: { blackboard: createBlackboardHandlers(service, deps.dispatch) }, service } satisfies Feature<'blackboard'>;
}
