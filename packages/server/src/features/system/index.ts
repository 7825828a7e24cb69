import type { Feature } from '../feature.ts';
import { createSystemHandlers, type SystemDeps } from './handlers.ts';

/** The root, health and readiness routes, the OpenAPI and llms documents, and the metrics. */
export function createSystemFeature(deps: SystemDeps) {
  return { handlers: { system: createSystemHandlers(deps).handlers } } satisfies Feature<'system'>;
}
