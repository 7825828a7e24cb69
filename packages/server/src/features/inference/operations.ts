import type { ClassifyBody, ClassifyResponse, EmbeddingsResponse, RerankResponse, SummarizeResponse } from '@svc/schemas';
import type { z } from 'zod';
import type { EmbeddingsRequest, RerankRequest, SummarizeRequest } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import { embeddingToBase64, embeddingToNumbers } from './encode-embedding.ts';
import { invokeModel, servedBy, type InvocationContext, type InvokeDeps } from './invoke-model.ts';

const unsupported = (engine: string, operation: string) => new ServiceError('model_operation_unsupported', `Engine ${engine} cannot serve ${operation}.`);

/**
 * The inference operations as plain functions of (deps, validated body, invocation): the HTTP
 * handlers call them, and so do batch jobs, so both report usage the same way and answer the same shapes.
 */
export async function runEmbeddings(deps: InvokeDeps, body: z.output<typeof EmbeddingsRequest>, call: InvocationContext): Promise<EmbeddingsResponse> {
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  const {
    value: vectors,
    usage,
    served,
  } = await invokeModel(deps, 'embeddings', 'embeddings', body.model, call, async ({ model, provider }, options) => {
    if (!provider.embed) throw unsupported(provider.id, 'embeddings');
    if (body.dimensions !== undefined && model.dimensions !== undefined && body.dimensions > model.dimensions) {
      throw new ServiceError('validation_failed', `Model "${model.id}" has ${model.dimensions} dimensions; ask for 1..${model.dimensions}.`, {
        detail: [{ loc: ['body', 'dimensions'], msg: `at most ${model.dimensions} for this model`, type: 'too_big' }],
      });
    }
    const result = await provider.embed({ model, inputs, dimensions: body.dimensions }, options);
    return { value: result.vectors, usage: result.usage };
  });
  const encode = body.encoding_format === 'base64' ? embeddingToBase64 : embeddingToNumbers;
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encode(vector) })),
    model: served.model.id,
    usage,
    svc: servedBy(served),
  };
}

export async function runRerank(deps: InvokeDeps, body: z.output<typeof RerankRequest>, call: InvocationContext): Promise<RerankResponse> {
  const documents = body.documents.map((document) => (typeof document === 'string' ? document : document.text));
  const {
    value: results,
    usage,
    served,
  } = await invokeModel(deps, 'rerank', 'rerank', body.model, call, async ({ model, provider }, options) => {
    if (!provider.rerank) throw unsupported(provider.id, 'rerank');
    const result = await provider.rerank({ model, query: body.query, documents, topN: body.top_n }, options);
    return { value: result.results, usage: result.usage };
  });
  const top = results.slice(0, body.top_n ?? results.length);
  return {
    results: top.map((result) => ({ ...result, ...(body.return_documents ? { document: { text: documents[result.index]! } } : {}) })),
    model: served.model.id,
    usage,
    svc: servedBy(served),
  };
}

export async function runClassify(deps: InvokeDeps, body: ClassifyBody, call: InvocationContext): Promise<ClassifyResponse> {
  const { value, usage, served } = await invokeModel(deps, 'classify', 'classify', body.model, call, async ({ model, provider }, options) => {
    if (!provider.classify) throw unsupported(provider.id, 'classify');
    const result = await provider.classify({ model, body }, options);
    return { value: result, usage: result.usage };
  });
  return { task: body.task, model: served.model.id, results: value.results, method: value.method, usage, svc: servedBy(served) };
}

export async function runSummarize(deps: InvokeDeps, body: z.output<typeof SummarizeRequest>, call: InvocationContext): Promise<SummarizeResponse> {
  const { value, usage, served } = await invokeModel(deps, 'summarize', 'summarize', body.model, call, async ({ model, provider }, options) => {
    if (!provider.summarize) throw unsupported(provider.id, 'summarize');
    const result = await provider.summarize({ model, text: body.text, maxSentences: body.max_sentences }, options);
    return { value: result, usage: result.usage };
  });
  return { summary: value.summary, sentences: value.sentences, extractive: value.extractive, model: served.model.id, usage, svc: servedBy(served) };
}
