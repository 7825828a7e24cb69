import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import type { Receipts } from '../receipts/index.ts';
import { createBlackboardHandlers } from './handlers.ts';
import { BlackboardService } from './service.ts';
import { ChannelListener } from '../../db/notifications.ts';
import { WatchSlots } from './watch-stream.ts';
import { BOARD_POSTS_CHANNEL, BoardWake, keysOfPayload } from './watch-wake.ts';

export type { BlackboardService };
export { describeMcpTools, MCP_SERVER_NAME, MCP_SERVER_TITLE } from './mcp.ts';
export { BatchCallNotRun, batchGateFor, McpBatchGate } from './mcp-batch.ts';
export { MCP_SUPPORTED_REVISIONS, MODERN_MCP_REVISION, precheckMcpRequest } from './mcp-precheck.ts';
export { screenValue } from './screening.ts';

/** The public blackboard: its REST routes over one service, its MCP tool over those routes (the dispatcher), and the housekeeping that prunes it. */
export async function createBlackboardFeature(deps: Pick<ServerDeps, 'config' | 'database' | 'dispatch' | 'log' | 'scheduler'>, given: { receipts: Receipts }) {
  const settings = deps.config.blackboard;
  const wake = new BoardWake();
  const service = new BlackboardService(deps.database, settings, given.receipts, wake);
  for (const [name, task] of Object.entries(service.housekeeping)) deps.scheduler.every(`blackboard.${name}`, 10 * 60_000, task);
  // Other replicas' puts reach this one's watch streams through NOTIFY; a lost connection wakes
  // every stream once it is back (what it missed is unknown), and the backstop poll covers the gap.
  const listener =
    deps.database.kind === 'postgres' && deps.config.databaseUrl
      ? new ChannelListener({
          url: deps.config.databaseUrl,
          channel: BOARD_POSTS_CHANNEL,
          onNotify: (payload) => wake.wake(keysOfPayload(payload)),
          onReset: () => wake.wake(undefined),
          onError: (error) =>
            deps.log.warn({ err: error }, 'the board-post listener lost its connection; watch streams fall back to their backstop poll until it is back'),
        })
      : undefined;
  await listener?.start();
  const slots = new WatchSlots({ perCaller: settings.watchPerCaller, max: settings.watchMaxStreams });
  return {
    handlers: { blackboard: createBlackboardHandlers(service, deps.dispatch, { slots, pollMs: settings.watchPollMs }) },
    service,
    close: async () => {
      await listener?.close();
    },
  } satisfies Feature<'blackboard'>;
}
