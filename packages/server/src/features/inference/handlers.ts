import { inferenceContract, summarizeStreamEventNames, ragStreamEventNames, type RagResponse, type SummarizeResponse } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { ServiceError } from '../../service-error.ts';
import { invokeModel, servedBy } from './invoke-model.ts';
import { runClassify, runEmbeddings, runRerank, runSummarize } from './operations.ts';
import { gatherRagDocuments, type RagSourceReaders } from './rag-sources.ts';
import { requestSpecialist } from './request-specialist.ts';
import type { RequestStore } from '../requests/index.ts';
import { cachedChatCompletion } from './cached-chat.ts';
import { cacheHeaders, type CachedAnswer, type ResponseCache } from './response-cache.ts';
import { evaluate } from './evaluate.ts';
import { discover, findSpecialist, routeRequest } from './guidance.ts';
import { runSpeedTest } from './speed-test.ts';

const unsupported = (engine: string, operation: string) => new ServiceError('model_operation_unsupported', `Engine ${engine} cannot serve ${operation}.`);

/*
 * The event streams are generator functions declared once, here, not made per call inside a
 * handler: the first call of a generator function gives it a new map in the old generation, which
 * keeps the handler's closure, and so the whole request, alive through young collections until
 * an old one (docs/inference.md, "What the young collections promote").
 */

/** A summary as events: its sentences, then the whole answer. */
async function* summaryEvents(completed: SummarizeResponse) {
  for (const sentence of completed.sentences) yield { event: summarizeStreamEventNames.sentence, data: sentence };
  yield { event: summarizeStreamEventNames.completed, data: completed };
}

/** An answer over documents as events: the passages it quotes, its words, then the whole answer. */
async function* ragEvents(completed: RagResponse) {
  for (const passage of completed.passages) yield { event: ragStreamEventNames.passage, data: passage };
  for (const piece of completed.answer.match(/\S+\s*/g) ?? []) yield { event: ragStreamEventNames.delta, data: { text: piece } };
  yield { event: ragStreamEventNames.completed, data: completed };
}

/** A 200 with the answer, and `x-svc-cache` when the response cache was consulted. */
function cachedResult<T>(answer: CachedAnswer<T>) {
  const headers = cacheHeaders(answer.cache);
  return headers ? { status: 200 as const, body: answer.body, headers } : { status: 200 as const, body: answer.body };
}

/** The inference routes. Each resolves its model, calls the engine through `invokeModel`, and shapes the answer. */
export function createInferenceHandlers(
  deps: Pick<ServerDeps, 'database' | 'models' | 'usage'>,
  sources: RagSourceReaders & { requests: Pick<RequestStore, 'fileFor'>; responseCache: ResponseCache },
) {
  const cache = sources.responseCache;
  return defineHandlers(inferenceContract, {
    async chat({ body, headers }, request) {
      return cachedResult(await cachedChatCompletion(deps, cache, headers, body, request, { serialized: true }));
    },
    async embeddings({ body }, request) {
      const call = { operation: 'embeddings', resolved: deps.models.resolve('embeddings', body.model), body };
      return cachedResult(await cache.through(request, call, () => runEmbeddings(deps, body, request), { serialized: true }));
    },
    async rerank({ body }, request) {
      const call = { operation: 'rerank', resolved: deps.models.resolve('rerank', body.model), body };
      return cachedResult(await cache.through(request, call, () => runRerank(deps, body, request), { serialized: true }));
    },
    async classify({ body }, request) {
      const call = { operation: 'classify', resolved: deps.models.resolve('classify', body.model), body };
      return cachedResult(await cache.through(request, call, () => runClassify(deps, body, request), { serialized: true }));
    },
    async summarize({ body }, request) {
      const answer = () => runSummarize(deps, body, request);
      // Computed before the stream opens, so an unknown model or a failed engine is still a plain error status.
      const completed = await answer();
      if (!body.stream) return { status: 200, body: completed };
      return { status: 200, body: summaryEvents(completed) };
    },
    async rag({ body }, request) {
      const documents = await gatherRagDocuments(sources, body, request);
      const answer = async () => {
        const { value, usage, served } = await invokeModel(deps, 'rag', 'rag', body.model, request, async ({ model, provider }, options) => {
          if (!provider.rag) throw unsupported(provider.id, 'rag');
          const result = await provider.rag({ model, question: body.question, documents, topK: body.top_k }, options);
          return { value: result, usage: result.usage };
        });
        return { ...value, model: served.model.id, usage, svc: servedBy(served) };
      };
      const completed = await answer();
      if (!body.stream) return { status: 200, body: completed };
      return { status: 200, body: ragEvents(completed) };
    },
    async route({ body }) {
      return { status: 200, body: routeRequest(deps.models, body) };
    },
    async discover({ body }) {
      return { status: 200, body: await discover(deps.models, deps.database.sequelize, body.need, body.limit) };
    },
    async eval({ body }, request) {
      return { status: 200, body: await evaluate(deps, body, request) };
    },
    async findSpecialist({ body }) {
      return { status: 200, body: await findSpecialist(deps.models, deps.database.sequelize, body.task, body.limit, body.min_score) };
    },
    async requestSpecialist({ body }, request) {
      return {
        status: 200,
        body: await requestSpecialist({ models: deps.models, sequelize: deps.database.sequelize, requests: sources.requests }, body, request.principal),
      };
    },
    async speedTest(_input, request) {
      return { status: 200, body: await runSpeedTest(deps.models, deps.database.sequelize, request) };
    },
  });
}
