import type { ServerDeps } from '../../deps.ts';
import type { Capability } from '../../inference/provider.ts';
import { builtinModels, createBuiltinProvider } from '../../inference/builtin/builtin-provider.ts';
import { createOpenAiCompatibleProvider } from '../../inference/openai-compatible/openai-compatible-provider.ts';
import type { BlackboardService } from '../blackboard/index.ts';
import type { CatalogService } from '../catalog/index.ts';
import type { RequestStore } from '../requests/index.ts';
import type { Feature } from '../feature.ts';
import { createInferenceHandlers } from './handlers.ts';
import { createUpstreamsHandlers, registerUpstreamModels } from './upstream-deployments.ts';
import { ResponseCache } from './response-cache.ts';

export { chatCompletion } from './chat.ts';
export { chatStreamEvents } from './chat-stream.ts';
export { callWithFallbacks, invokeModel, reportUsage, servedBy } from './invoke-model.ts';
export { runClassify, runEmbeddings, runRerank, runSummarize } from './operations.ts';
export { cachedChatCompletion } from './cached-chat.ts';
export { cacheHeaders, chatMayBeCached, ResponseCache, type CacheStatus } from './response-cache.ts';

/**
 * The inference feature: registers the engines (the built-in one always, upstreams from the
 * configuration) and their models, counts every call's usage in the metrics, and serves the routes.
 */
export function createInferenceFeature(
  deps: Pick<ServerDeps, 'caches' | 'config' | 'database' | 'log' | 'metrics' | 'models' | 'scheduler' | 'usage'>,
  given: { blackboard: BlackboardService; catalog: CatalogService; requests: RequestStore },
) {
  deps.models.registerProvider(createBuiltinProvider());
  for (const model of builtinModels) deps.models.registerModel(model);
  const { upstreams, models, defaults } = deps.config.inference;
  const upstreamProviders = new Map(upstreams.map((upstream) => [upstream.id, createOpenAiCompatibleProvider(upstream)]));
  for (const provider of upstreamProviders.values()) deps.models.registerProvider(provider);
  const pools = registerUpstreamModels(deps, upstreamProviders);
  for (const [capability, modelId] of Object.entries(defaults)) deps.models.setDefault(capability as Capability, modelId);
  // Ids only: an upstream's address and key stay out of the log.
  if (upstreams.length > 0)
    deps.log.info({ upstreams: upstreams.map((upstream) => upstream.id), models: models.map((model) => model.id) }, 'inference upstreams registered');
  const unsubscribe = deps.usage.subscribe((event) => deps.metrics.observeInference(event));
  // One for the server: the chat, Responses and credit routes are given it, and /v1/cache reports it.
  const responseCache = new ResponseCache(deps);
  return {
    handlers: { inference: createInferenceHandlers(deps, { ...given, responseCache }), upstreams: createUpstreamsHandlers(pools) },
    responseCache,
    close: async () => {
      unsubscribe();
      await deps.models.close();
    },
  } satisfies Feature<'inference' | 'upstreams'>;
}
