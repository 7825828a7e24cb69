import type { ServerDeps } from '../../deps.ts';
import { builtinModels, createBuiltinProvider } from '../../inference/builtin/builtin-provider.ts';
import type { BlackboardService } from '../blackboard/service.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import type { RequestStore } from '../requests/request-store.ts';
import { createInferenceHandlers } from './handlers.ts';

/**
 * The inference feature: registers the engines (the built-in one always, upstreams from the
 * configuration) and their models, counts every call's usage in the metrics, and serves the routes.
 */
export function createInferenceFeature(deps: ServerDeps, sources: { blackboard: BlackboardService; catalog: CatalogService; requests: RequestStore }) {
  deps.models.registerProvider(createBuiltinProvider());
  for (const model of builtinModels) deps.models.registerModel(model);
  const unsubscribe = deps.usage.subscribe((event) => deps.metrics.observeInference(event));
  return {
    handlers: createInferenceHandlers(deps, sources),
    close: async () => {
      unsubscribe();
      await deps.models.close();
    },
  };
}
