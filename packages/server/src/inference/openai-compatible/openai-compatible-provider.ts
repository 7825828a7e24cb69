import type { ChatCompletion, ChatCompletionChunk, InferenceUsage } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import { withWireJson } from '../../http/sse.ts';
import {
  EngineUnavailableError,
  type ChatRequest,
  type EmbedRequest,
  type EngineCallOptions,
  type InferenceProvider,
  type ModelEntry,
  type RerankRequest,
  type ResponsesEngineRequest,
  type ResponsesUpstreamEvent,
} from '../provider.ts';
import {
  createUpstreamDispatcher,
  failureBeforeAnswer,
  openUpstreamCall,
  readUpstreamJson,
  redactSecret,
  upstreamTarget,
  type UpstreamTarget,
} from './upstream-call.ts';
import type { UpstreamModelSettings, UpstreamSettings } from './upstream-config.ts';
import { readUpstreamEvents, type UpstreamEvent, type UpstreamEventStream } from './read-upstream-events.ts';
import { usageFrom } from './upstream-usage.ts';
import { recordResponseModel } from '../model-call-trace.ts';

/** The model entry the registry keeps for a configured upstream model. */
export function upstreamModelEntry(model: UpstreamModelSettings): ModelEntry {
  return {
    id: model.id,
    engine: model.upstream,
    engineModel: model.upstreamModel,
    capabilities: model.capabilities,
    method: 'neural',
    label: model.label,
    description: model.description,
    ...(model.dimensions !== undefined ? { dimensions: model.dimensions } : {}),
    fallbacks: model.fallbacks,
  };
}

interface OpenAiEmbeddings {
  data?: Array<{ index?: number; embedding?: unknown }>;
  usage?: unknown;
}
type CohereRerank = { results?: Array<{ index?: unknown; relevance_score?: unknown }>; usage?: unknown; meta?: unknown };
type TeiRerank = Array<{ index?: unknown; score?: unknown }>;

const badAnswer = (upstream: UpstreamSettings, what: string) => new ServiceError('upstream_error', `Upstream "${upstream.id}" sent ${what}.`);

/**
 * An engine over any OpenAI-compatible base URL (OpenAI, vLLM, Ollama, llama.cpp server, TEI,
 * LiteLLM): chat (JSON and streamed), embeddings and rerank (Cohere-shaped or TEI's native
 * `/rerank`). Answers name svc's public model id, never the upstream's URL or key.
 */
export function createOpenAiCompatibleProvider(upstream: UpstreamSettings): InferenceProvider {
  const chatTarget = upstreamTarget(`${upstream.baseUrl}/chat/completions`);
  const embeddingsTarget = upstreamTarget(`${upstream.baseUrl}/embeddings`);
  const rerankTarget = upstreamTarget(upstream.rerankUrl);
  const responsesTarget = upstreamTarget(`${upstream.baseUrl}/responses`);
  const dispatcher = createUpstreamDispatcher(upstream);
  const open = (target: UpstreamTarget, body: unknown, options: EngineCallOptions) => openUpstreamCall(upstream, dispatcher, target, body, options);
  /** The request as the upstream gets it: the caller's fields, the upstream's model name. */
  const chatBody = ({ model, body }: ChatRequest, stream: boolean) => ({
    ...body,
    model: model.engineModel,
    stream,
    // Usage is always asked for, so billing counts what was used; the caller gets the usage chunk only if it asked.
    ...(stream ? { stream_options: { ...body.stream_options, include_usage: true } } : { stream_options: undefined }),
  });

  return {
    id: upstream.id,
    kind: 'openai-compatible',
    label: upstream.label,
    description: 'An OpenAI-compatible inference server configured by the operator; chat and embeddings pass through, streams included.',
    available: () => true,
    close: () => dispatcher.close(),

    async chat(request, options) {
      const call = await open(chatTarget, chatBody(request, false), options);
      const completion = await readUpstreamJson<ChatCompletion>(upstream, call, options);
      if (completion?.object !== 'chat.completion' || !Array.isArray(completion.choices))
        throw failureBeforeAnswer(upstream, new SyntaxError('not a chat.completion'), options);
      recordResponseModel(completion.model);
      return {
        ...completion,
        model: request.model.id,
        usage: usageFrom(completion.usage) ?? { prompt_tokens: 0, total_tokens: 0 },
        svc: { engine: upstream.id, model: request.model.id, method: 'neural' },
      };
    },

    async chatStream(request, options) {
      const call = await open(chatTarget, chatBody(request, true), options);
      const modelId = request.model.id;
      let first = true;
      const chunks = readUpstreamEvents(upstream, call, options, (event, json) => {
        // The first chunk is read inside the attempt's span: the model the upstream says answered.
        if (first) recordResponseModel((event as { model?: unknown }).model);
        first = false;
        return asChunk(event, json, modelId);
      });
      return startingWith(await firstEvent(chunks, options), chunks);
    },

    async responses(request: ResponsesEngineRequest, options: EngineCallOptions) {
      const call = await open(responsesTarget, { ...request.body, model: request.model.engineModel, stream: false }, options);
      const answer = await readUpstreamJson<Record<string, unknown>>(upstream, call, options);
      if (answer?.object !== 'response' || !Array.isArray(answer.output)) throw failureBeforeAnswer(upstream, new SyntaxError('not a response'), options);
      return answer;
    },

    async responsesStream(request: ResponsesEngineRequest, options: EngineCallOptions) {
      const call = await open(responsesTarget, { ...request.body, model: request.model.engineModel, stream: true }, options);
      const events = readUpstreamEvents(upstream, call, options, (event) => asResponsesEvent(upstream, event), true);
      return startingWith(await firstEvent(events, options), events);
    },

    async embed(request: EmbedRequest, options: EngineCallOptions) {
      const body = {
        model: request.model.engineModel,
        input: request.inputs,
        encoding_format: 'float',
        ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
      };
      const call = await open(embeddingsTarget, body, options);
      const answer = await readUpstreamJson<OpenAiEmbeddings>(upstream, call, options);
      const data = answer?.data;
      if (!Array.isArray(data) || data.length !== request.inputs.length)
        throw badAnswer(upstream, `${Array.isArray(data) ? data.length : 'no'} embeddings for ${request.inputs.length} inputs`);
      const vectors: Array<ArrayLike<number>> = new Array(data.length);
      data.forEach((item, place) => {
        const index = typeof item.index === 'number' ? item.index : place;
        if (!Array.isArray(item.embedding) || index < 0 || index >= data.length) throw badAnswer(upstream, 'an embedding that is not a list of numbers');
        vectors[index] = item.embedding as number[];
      });
      const usage = usageFrom(answer.usage) ?? { prompt_tokens: 0, total_tokens: 0 };
      return { vectors, usage: { ...usage, units: request.inputs.length } };
    },

    async rerank(request: RerankRequest, options: EngineCallOptions) {
      const results = upstream.rerankApi === 'tei' ? await rerankTei(request, options) : await rerankCohere(request, options);
      for (const result of results.results) {
        if (!Number.isInteger(result.index) || result.index < 0 || result.index >= request.documents.length || !Number.isFinite(result.relevance_score))
          throw badAnswer(upstream, 'a rerank result outside the documents');
      }
      return { results: results.results.sort((a, b) => b.relevance_score - a.relevance_score), usage: { ...results.usage, units: request.documents.length } };
    },
  };

  async function rerankCohere(request: RerankRequest, options: EngineCallOptions) {
    const body = {
      model: request.model.engineModel,
      query: request.query,
      documents: request.documents,
      ...(request.topN !== undefined ? { top_n: request.topN } : {}),
      return_documents: false,
    };
    const call = await open(rerankTarget, body, options);
    const answer = await readUpstreamJson<CohereRerank>(upstream, call, options);
    if (!Array.isArray(answer?.results)) throw badAnswer(upstream, 'a rerank answer without results');
    return {
      results: answer.results.map((item) => ({ index: Number(item.index), relevance_score: Number(item.relevance_score) })),
      usage: usageFrom(answer.usage) ?? { prompt_tokens: 0, total_tokens: 0 },
    };
  }

  /** TEI: `{ query, texts }` in, a bare array of `{ index, score }` out, no usage. */
  async function rerankTei(request: RerankRequest, options: EngineCallOptions) {
    const body = { query: request.query, texts: request.documents, raw_scores: false, return_text: false, truncate: true };
    const call = await open(rerankTarget, body, options);
    const answer = await readUpstreamJson<TeiRerank>(upstream, call, options);
    if (!Array.isArray(answer)) throw badAnswer(upstream, 'a rerank answer that is not a list');
    return {
      results: answer.map((item) => ({ index: Number(item.index), relevance_score: Number(item.score) })),
      usage: { prompt_tokens: 0, total_tokens: 0 } as InferenceUsage,
    };
  }
}

/**
 * The first event of a stream, awaited before the caller's stream starts, so an upstream that
 * answers its headers and then fails or stays silent still counts as failing before its first
 * byte: the caller may fall back.
 */
async function firstEvent<T>(events: UpstreamEventStream<T>, options: EngineCallOptions): Promise<IteratorResult<T>> {
  try {
    return await events.next();
  } catch (error) {
    await events.return();
    if (error instanceof ServiceError && !options.signal.aborted)
      throw new EngineUnavailableError(error.code === 'upstream_timeout' ? 'upstream_timeout' : 'upstream_error', error.message);
    throw error;
  }
}

/** A Responses event as svc reads it; the API's `error` event (a failure after the start) ends the stream as a failure. */
function asResponsesEvent(upstream: UpstreamSettings, event: UpstreamEvent): ResponsesUpstreamEvent {
  if (typeof event.type !== 'string') throw new ServiceError('upstream_error', `Upstream "${upstream.id}" sent a Responses event without a type.`);
  if (event.type === 'error') {
    const message = typeof event.message === 'string' ? event.message.slice(0, 500) : 'no message';
    throw new ServiceError('upstream_error', `Upstream "${upstream.id}" failed mid-stream: ${redactSecret(message, upstream)}`);
  }
  return event as ResponsesUpstreamEvent;
}

/**
 * An upstream chunk as svc sends it: svc's public model id in place of the upstream's. A chunk
 * that needs no change (the upstream names the model as svc does, no usage to normalise) keeps
 * its JSON text and goes out as it came; multi-line data (pretty-printed JSON) is re-serialised.
 */
function asChunk(event: UpstreamEvent, json: string, modelId: string): ChatCompletionChunk {
  const chunk = event as unknown as ChatCompletionChunk;
  if (chunk.model === modelId && !chunk.usage && Array.isArray(chunk.choices) && !json.includes('\n')) return withWireJson(chunk, json);
  chunk.model = modelId;
  if (chunk.usage) chunk.usage = usageFrom(chunk.usage) ?? null;
  if (!Array.isArray(chunk.choices)) chunk.choices = [];
  return chunk;
}

/**
 * The rest of a stream with its first result, already awaited, put back in front. A plain
 * iterator rather than a generator around `rest`: the chunks that follow reach the caller with
 * no extra generator step each.
 */
function startingWith<T>(first: IteratorResult<T>, rest: UpstreamEventStream<T>): AsyncIterableIterator<T> {
  let head: IteratorResult<T> | undefined = first;
  return {
    next() {
      if (head === undefined) return rest.next();
      const result = head;
      head = undefined;
      return Promise.resolve(result);
    },
    return() {
      head = undefined;
      return rest.return();
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
