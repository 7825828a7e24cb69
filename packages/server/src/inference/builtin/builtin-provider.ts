import { runInSlices } from '../../bounded/work-in-slices.ts';
import { ServiceError } from '../../service-error.ts';
import type { ChatRequest, InferenceProvider } from '../provider.ts';
import { embedText, tokenize } from '../hashed-embeddings.ts';
import { bm25ScoresSteps, buildBm25IndexSteps, rankByScore } from './bm25.ts';
import { BUILTIN_ENGINE_ID } from './builtin-models.ts';
import { classifyTextsSteps } from './classify/classify-texts.ts';
import { extractiveChatChunks, extractiveChatCompletion } from './extractive-chat-completion.ts';
import { extractiveRagSteps } from './extractive-rag.ts';
import { textRankSteps } from './textrank.ts';
import { countWordTokens, countWordTokensSteps } from './text-units.ts';

export { BUILTIN_ENGINE_ID, builtinModels } from './builtin-models.ts';

/** Truncates a unit vector to its first `dimensions` numbers and renormalises it (what OpenAI's `dimensions` does). */
function shorten(vector: Float32Array, dimensions: number): Float32Array {
  if (dimensions >= vector.length) return vector;
  const short = vector.slice(0, dimensions);
  let norm = 0;
  for (const value of short) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let index = 0; index < short.length; index++) short[index]! /= norm;
  return short;
}

/**
 * The extractive chat has one answer to give: `n > 1` is refused by name rather than answered
 * with fewer choices than asked for.
 */
function refuseSeveralChoices({ model, body }: ChatRequest): void {
  const choices = body.n ?? 1;
  if (choices <= 1) return;
  const message = `Model "${model.id}" answers one choice: n must be 1 (it was ${choices}). Ask an upstream model for several choices.`;
  throw new ServiceError('chat_choices_unsupported', message, { detail: [{ loc: ['body', 'n'], msg: message, type: 'chat_choices_unsupported' }] });
}

/**
 * The built-in engine. Each capability has one model (see builtin-models.ts); the methods are
 * CPU work over the request's own text, linear in it (or, for TextRank, capped), bounded by the
 * contract's size limits. At those sizes the work still takes up to seconds, so each runs in
 * slices between turns of the event loop (work-in-slices.ts): no request holds the others.
 */
export function createBuiltinProvider(): InferenceProvider {
  return {
    id: BUILTIN_ENGINE_ID,
    kind: 'builtin',
    label: 'Built-in (classical methods, no model weights)',
    description:
      'Runs in the server process with no network and no downloaded weights: hashed n-gram embeddings, BM25 ranking, lexicon and rule classifiers, TextRank summaries, extractive answers and an extractive chat about svc. Useful everywhere, not a neural model.',
    available: () => true,
    async embed({ inputs, dimensions }) {
      return runInSlices(
        (function* () {
          let tokens = 0;
          const vectors: Float32Array[] = [];
          for (const input of inputs) {
            tokens += tokenize(input).length;
            const vector = embedText(input);
            vectors.push(dimensions !== undefined ? shorten(vector, dimensions) : vector);
            yield;
          }
          return { vectors, usage: { prompt_tokens: tokens, total_tokens: tokens, units: inputs.length } };
        })(),
      );
    },
    async rerank({ query, documents }) {
      return runInSlices(
        (function* () {
          const { normalised } = yield* bm25ScoresSteps(yield* buildBm25IndexSteps(documents), query);
          let tokens = countWordTokens(query);
          for (const document of documents) {
            tokens += countWordTokens(document);
            yield;
          }
          return {
            results: rankByScore(normalised).map((index) => ({ index, relevance_score: normalised[index]! })),
            usage: { prompt_tokens: tokens, total_tokens: tokens, units: documents.length },
          };
        })(),
      );
    },
    async classify({ body }) {
      return runInSlices(classifyTextsSteps(body));
    },
    async summarize({ text, maxSentences }) {
      return runInSlices(
        (function* () {
          const sentences = yield* textRankSteps(text, maxSentences);
          const summary = sentences.map((sentence) => sentence.text).join(' ');
          const promptTokens = yield* countWordTokensSteps(text);
          const completionTokens = yield* countWordTokensSteps(summary);
          return {
            summary,
            sentences,
            extractive: true as const,
            usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
          };
        })(),
      );
    },
    async rag({ question, documents, topK }) {
      return runInSlices(extractiveRagSteps(question, documents, topK));
    },
    async chat(request) {
      refuseSeveralChoices(request);
      return extractiveChatCompletion(request);
    },
    async chatStream(request, options) {
      // Refused here, before the stream is handed back, so the caller gets a 400 and not a failed stream.
      refuseSeveralChoices(request);
      return extractiveChatChunks(request, options);
    },
  };
}
