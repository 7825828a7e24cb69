import { inferenceContract, summarizeStreamEventNames, ragStreamEventNames } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { ServiceError } from '../../http/service-error.ts';
import { embeddingToBase64, embeddingToNumbers } from './encode-embedding.ts';
import { invokeModel, servedBy } from './invoke-model.ts';
import { gatherRagDocuments, type RagSourceReaders } from './rag-sources.ts';
import { chatCompletion } from './chat.ts';

const unsupported = (engine: string, operation: string) => new ServiceError('model_operation_unsupported', `Engine ${engine} cannot serve ${operation}.`);

/** The inference routes. Each resolves its model, calls the engine through `invokeModel`, and shapes the answer. */
export function createInferenceHandlers(deps: ServerDeps, sources: RagSourceReaders) {
  return defineHandlers(inferenceContract, {
    async chat({ body }, request) {
      return { status: 200, body: await chatCompletion(deps, body, request) };
    },
    async embeddings({ body }, request) {
      const inputs = typeof body.input === 'string' ? [body.input] : body.input;
      const { value: vectors, usage, served } = await invokeModel(deps, 'embeddings', 'embeddings', body.model, request, async ({ model, provider }, options) => {
        if (!provider.embed) throw unsupported(provider.id, 'embeddings');
        if (body.dimensions !== undefined && model.dimensions !== undefined && body.dimensions > model.dimensions) {
          throw new ServiceError('validation_failed', `Model "${model.id}" has ${model.dimensions} dimensions; ask for 1..${model.dimensions}.`, { detail: [{ loc: ['body', 'dimensions'], msg: `at most ${model.dimensions} for this model`, type: 'too_big' }] });
        }
        const result = await provider.embed({ model, inputs, dimensions: body.dimensions }, options);
        return { value: result.vectors, usage: result.usage };
      });
      const encode = body.encoding_format === 'base64' ? embeddingToBase64 : embeddingToNumbers;
      return {
        status: 200,
        body: { object: 'list', data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encode(vector) })), model: served.model.id, usage, svc: servedBy(served) },
      };
    },
    async rerank({ body }, request) {
      const documents = body.documents.map((document) => (typeof document === 'string' ? document : document.text));
      const { value: results, usage, served } = await invokeModel(deps, 'rerank', 'rerank', body.model, request, async ({ model, provider }, options) => {
        if (!provider.rerank) throw unsupported(provider.id, 'rerank');
        const result = await provider.rerank({ model, query: body.query, documents, topN: body.top_n }, options);
        return { value: result.results, usage: result.usage };
      });
      const top = results.slice(0, body.top_n ?? results.length);
      return {
        status: 200,
        body: {
          results: top.map((result) => ({ ...result, ...(body.return_documents ? { document: { text: documents[result.index]! } } : {}) })),
          model: served.model.id,
          usage,
          svc: servedBy(served),
        },
      };
    },
    async classify({ body }, request) {
      const { value, usage, served } = await invokeModel(deps, 'classify', 'classify', body.model, request, async ({ model, provider }, options) => {
        if (!provider.classify) throw unsupported(provider.id, 'classify');
        const result = await provider.classify({ model, body }, options);
        return { value: result, usage: result.usage };
      });
      return { status: 200, body: { task: body.task, model: served.model.id, results: value.results, method: value.method, usage, svc: servedBy(served) } };
    },
    async summarize({ body }, request) {
      const run = () =>
        invokeModel(deps, 'summarize', 'summarize', body.model, request, async ({ model, provider }, options) => {
          if (!provider.summarize) throw unsupported(provider.id, 'summarize');
          const result = await provider.summarize({ model, text: body.text, maxSentences: body.max_sentences }, options);
          return { value: result, usage: result.usage };
        });
      const answer = async () => {
        const { value, usage, served } = await run();
        return { summary: value.summary, sentences: value.sentences, extractive: value.extractive, model: served.model.id, usage, svc: servedBy(served) };
      };
      if (!body.stream) return { status: 200, body: await answer() };
      return {
        status: 200,
        body: (async function* () {
          const completed = await answer();
          for (const sentence of completed.sentences) yield { event: summarizeStreamEventNames.sentence, data: sentence };
          yield { event: summarizeStreamEventNames.completed, data: completed };
        })(),
      };
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
      if (!body.stream) return { status: 200, body: await answer() };
      return {
        status: 200,
        body: (async function* () {
          const completed = await answer();
          for (const passage of completed.passages) yield { event: ragStreamEventNames.passage, data: passage };
          for (const piece of completed.answer.match(/\S+\s*/g) ?? []) yield { event: ragStreamEventNames.delta, data: { text: piece } };
          yield { event: ragStreamEventNames.completed, data: completed };
        })(),
      };
    },
    async route() {
      throw new ServiceError('not_implemented', 'route: being built');
    },
    async discover() {
      throw new ServiceError('not_implemented', 'discover: being built');
    },
    async eval() {
      throw new ServiceError('not_implemented', 'eval: being built');
    },
    async findSpecialist() {
      throw new ServiceError('not_implemented', 'find_specialist: being built');
    },
    async speedTest() {
      throw new ServiceError('not_implemented', 'speed-test: being built');
    },
  });
}
