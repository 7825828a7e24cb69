import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import { createSystemHandlers } from './handlers.ts';

/** The root, health and readiness routes, the OpenAPI and llms documents, and the metrics. */
export function createSystemFeature(deps: ServerDeps) {
  return { handlers: { system: createSystemHandlers(deps).handlers } } satisfies Feature<'system'>;
}
