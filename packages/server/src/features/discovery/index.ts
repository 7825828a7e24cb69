import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import { A2aTaskRunner } from './a2a-task-runner.ts';
import { A2aTaskStore } from './a2a-task-store.ts';
import { createDiscoveryHandlers } from './handlers.ts';

/** How often A2A tasks past their retention are deleted (reads ignore them at once). */
const PRUNE_INTERVAL_MS = 10 * 60_000;

/** The discovery documents (MCP server card, A2A agent card), the A2A trial, and A2A skills as stored tasks. */
export function createDiscoveryFeature(
  deps: Pick<ServerDeps, 'caches' | 'database' | 'dispatch' | 'log' | 'models' | 'publicUrls' | 'scheduler' | 'startedAt' | 'usage'>,
) {
  const store = new A2aTaskStore(deps.database.sequelize);
  const runner = new A2aTaskRunner(store, deps.dispatch, deps.log);
  deps.scheduler.every('a2a.prune', PRUNE_INTERVAL_MS, () => store.prune());
  return {
    handlers: { discovery: createDiscoveryHandlers(deps, { store, runner }) },
    close: () => runner.close(),
  } satisfies Feature<'discovery'>;
}
