import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import type { Tasks } from '../tasks/index.ts';
import { A2aTaskRunner } from './a2a-task-runner.ts';
import { createDiscoveryHandlers } from './handlers.ts';

/**
 * The discovery documents (MCP server card, A2A agent card), the A2A trial, and A2A skills as
 * tasks of the durable task store (its retention, leases and pruning are the store's).
 */
export function createDiscoveryFeature(
  deps: Pick<ServerDeps, 'caches' | 'database' | 'dispatch' | 'log' | 'models' | 'publicUrls' | 'startedAt' | 'usage'>,
  given: { tasks: Tasks },
) {
  const runner = new A2aTaskRunner(given.tasks, deps.dispatch, deps.log);
  return {
    handlers: { discovery: createDiscoveryHandlers(deps, { runner }) },
  } satisfies Feature<'discovery'>;
}
