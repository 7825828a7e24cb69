import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import { createModelsHandlers } from './handlers.ts';

export type { ModelRegistry, ResolvedModel } from './model-registry.ts';

/** The model list and the cache report, over the registries every feature shares (in ServerDeps). */
export function createModelsFeature(deps: Pick<ServerDeps, 'caches' | 'models'>) {
  return { handlers: { models: createModelsHandlers(deps) } } satisfies Feature<'models'>;
}
