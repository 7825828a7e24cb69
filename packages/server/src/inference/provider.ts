import type { Logger } from 'pino';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionsBody,
  ClassifyBody,
  ClassifyResponse,
  InferenceUsage,
  RagPassage,
  SummarySentence,
} from '@svc/schemas';

/**
 * What an engine can be asked to do. An operation of the API maps to one capability; a model
 * lists the capabilities it serves, and the registry refuses a model for an operation it lacks.
 */
export const capabilities = ['chat', 'embeddings', 'rerank', 'classify', 'summarize', 'rag', 'responses'] as const;
export type Capability = (typeof capabilities)[number];

/** What every engine call gets: the client's abort signal (a disconnect aborts upstream work) and a logger. */
export interface EngineCallOptions {
  signal: AbortSignal;
  log: Logger;
}

/** A model as the registry knows it: the public id, the engine that serves it and what the engine calls it. */
export interface ModelEntry {
  id: string;
  engine: string;
  /** The model's name at its engine (an upstream's own id; an alias maps a public id onto it). */
  engineModel: string;
  capabilities: readonly Capability[];
  method: 'neural' | 'classical';
  label: string;
  description: string;
  dimensions?: number;
  /** Public model ids tried in order when this model's engine fails before its first byte. */
  fallbacks: readonly string[];
}

export interface EmbedRequest {
  model: ModelEntry;
  inputs: readonly string[];
  dimensions?: number;
}
export interface EmbedResult {
  vectors: ReadonlyArray<ArrayLike<number>>;
  usage: InferenceUsage;
}

export interface RerankRequest {
  model: ModelEntry;
  query: string;
  documents: readonly string[];
  topN?: number;
}
export interface RerankResult {
  /** Best first; `index` is the document's place in the request. */
  results: Array<{ index: number; relevance_score: number }>;
  usage: InferenceUsage;
}

export interface ClassifyRequest {
  model: ModelEntry;
  body: ClassifyBody;
}
export type ClassifyResult = Pick<ClassifyResponse, 'results' | 'method' | 'usage'>;

export interface SummarizeRequest {
  model: ModelEntry;
  text: string;
  maxSentences: number;
}
export interface SummarizeResult {
  summary: string;
  sentences: SummarySentence[];
  extractive: boolean;
  usage: InferenceUsage;
}

export interface RagDocument {
  index: number;
  id?: string;
  text: string;
}
export interface RagRequest {
  model: ModelEntry;
  question: string;
  documents: readonly RagDocument[];
  topK: number;
}
export interface RagResult {
  answer: string;
  citations: Array<RagPassage & { marker: number }>;
  passages: RagPassage[];
  answerable: boolean;
  extractive: boolean;
  usage: InferenceUsage;
}

/** A chat request as an engine gets it: the validated body, with `model` the engine's own name. */
export interface ChatRequest {
  model: ModelEntry;
  body: ChatCompletionsBody;
}

/**
 * An open chat stream. `chatStream` resolves only once the engine has answered (for an upstream:
 * its status and headers arrived), so a failure before the first byte can still fall back to
 * another model; after that, failures surface from the iterator and end the stream with an error chunk.
 */
export type ChatChunkStream = AsyncIterable<ChatCompletionChunk>;

/** A Responses request for an engine that speaks the Responses API itself (the `responses` capability). */
export interface ResponsesEngineRequest {
  model: ModelEntry;
  /** The body as the upstream gets it, but for `model` (the engine's own name is put in) and `stream`. */
  body: Record<string, unknown>;
}

/** A Responses event as an upstream sent it (`type`, `sequence_number`, ...). */
export type ResponsesUpstreamEvent = Record<string, unknown> & { type: string };

/**
 * One engine. Each capability is optional: the registry only routes an operation to an engine
 * whose model declares it, and an engine implements what its models declare.
 */
export interface InferenceProvider {
  readonly id: string;
  readonly kind: 'builtin' | 'openai-compatible';
  readonly label: string;
  readonly description: string;
  /** Whether the engine can be reached right now (the built-in engine always). */
  available(): boolean;
  chat?(request: ChatRequest, options: EngineCallOptions): Promise<ChatCompletion>;
  chatStream?(request: ChatRequest, options: EngineCallOptions): Promise<ChatChunkStream>;
  embed?(request: EmbedRequest, options: EngineCallOptions): Promise<EmbedResult>;
  rerank?(request: RerankRequest, options: EngineCallOptions): Promise<RerankResult>;
  classify?(request: ClassifyRequest, options: EngineCallOptions): Promise<ClassifyResult>;
  summarize?(request: SummarizeRequest, options: EngineCallOptions): Promise<SummarizeResult>;
  rag?(request: RagRequest, options: EngineCallOptions): Promise<RagResult>;
  /** The Responses API passed through (JSON): the upstream's Response object. */
  responses?(request: ResponsesEngineRequest, options: EngineCallOptions): Promise<Record<string, unknown>>;
  /** The Responses API passed through (streamed); resolves once the first event arrived, as `chatStream` does. */
  responsesStream?(request: ResponsesEngineRequest, options: EngineCallOptions): Promise<AsyncIterable<ResponsesUpstreamEvent>>;
  /** Stops timers and open connections at shutdown. */
  close?(): Promise<void>;
}

/** Thrown by an engine when it failed before producing anything: the caller may try a fallback. */
export class EngineUnavailableError extends Error {
  /** `upstream_unavailable`: no deployment of the model could be tried (all cooling down or at their in-flight maximum). */
  readonly code: 'upstream_error' | 'upstream_timeout' | 'upstream_unavailable';
  readonly status: number | undefined;
  /** How long the upstream (its `Retry-After`) or svc (a cooldown's end) says to wait before trying again. */
  readonly retryAfterMs: number | undefined;
  constructor(code: 'upstream_error' | 'upstream_timeout' | 'upstream_unavailable', message: string, status?: number, retryAfterMs?: number) {
    super(message);
    this.name = 'EngineUnavailableError';
    this.code = code;
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }
}
