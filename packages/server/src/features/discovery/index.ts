import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import { createDiscoveryHandlers } from './handlers.ts';

/** The discovery documents (MCP server card, A2A agent card) and the A2A trial. */
export function createDiscoveryFeature(deps: ServerDeps) {
  return { handlers: { discovery: createDiscoveryHandlers(deps) } } satisfies Feature<'discovery'>;
}
