import type { ChatCompletionsBody, ChatMessage } from '@svc/schemas';
import type { RagDocument } from '../provider.ts';
import type { Steps } from '../../bounded/work-in-slices.ts';
import { retrievePassagesSteps } from './extractive-rag.ts';
import { svcDocumentation } from './svc-corpus.ts';
import { countWordTokens, indexTermsSteps } from './text-units.ts';

/** Said with every answer, so no reader takes a quote for generated text. */
export const EXTRACTIVE_NOTE =
  "svc-extractive-chat is extractive, not a generative model: it quotes svc's documentation and this conversation, and writes nothing of its own.";
/** A passage below this share of the BM25 ceiling is not quoted (it only brushes the question). */
const QUOTE_MIN_RELEVANCE = 0.12;
const MAX_QUOTES = 3;

export type ChatFinishReason = 'stop' | 'length';

export interface ExtractiveChatAnswer {
  content: string;
  finishReason: ChatFinishReason;
  promptTokens: number;
  completionTokens: number;
}

export function messageText(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  if (Array.isArray(message.content)) return message.content.map((part) => part.text ?? '').join('\n');
  return '';
}

/**
 * The answer's full text before `stop` and `max_tokens`: quotes of the passages (svc's
 * documentation and the earlier messages) that best match the last user message, each with
 * where it came from, under a line that says the answer is extractive.
 */
function* composeAnswer(messages: readonly ChatMessage[]): Steps<string> {
  const lastUser = messages.findLastIndex((message) => message.role === 'user');
  const question = lastUser >= 0 ? messageText(messages[lastUser]!) : '';
  const documentation = svcDocumentation();
  const conversation: RagDocument[] = messages
    // The question itself, and this model's own earlier answers (quotes of quotes), are not sources.
    .filter((message, position) => position !== lastUser && !(message.role === 'assistant' && messageText(message).startsWith(EXTRACTIVE_NOTE)))
    .map((message, position) => ({ index: documentation.length + position, id: `conversation (${message.role})`, text: messageText(message) }))
    .filter((document) => document.text.trim() !== '');
  const documents = [...documentation, ...conversation];
  const quotes: string[] = [];
  if ((yield* indexTermsSteps(question)).length > 0) {
    for (const { passage, relevance } of yield* retrievePassagesSteps(question, documents)) {
      if (relevance < QUOTE_MIN_RELEVANCE || quotes.length >= MAX_QUOTES) break;
      const source = documents.find((document) => document.index === passage.documentIndex)?.id ?? 'svc';
      quotes.push(`> ${passage.text.replace(/(?:(?<!\s)\s+)?\n\s*/g, ' ')}\n(from ${source})`);
    }
  }
  if (quotes.length === 0) {
    return `${EXTRACTIVE_NOTE} Nothing in svc's documentation or this conversation matches your message, so there is nothing to quote. Ask about svc (its routes, models, keys, the client or the CLI), or configure a generative upstream model.`;
  }
  return `${EXTRACTIVE_NOTE} The closest passages:\n\n${quotes.join('\n\n')}`;
}

/** Cuts the text before the first stop sequence found in it. */
function applyStop(text: string, stop: ChatCompletionsBody['stop']): { text: string; stopped: boolean } {
  const sequences = stop === undefined || stop === null ? [] : typeof stop === 'string' ? [stop] : stop;
  const at = Math.min(...sequences.map((sequence) => text.indexOf(sequence)).filter((position) => position >= 0), Infinity);
  return at === Infinity ? { text, stopped: false } : { text: text.slice(0, at), stopped: true };
}

/** The text up to and including its `limit`-th word token (the engine's own tokenizer). */
function truncateToWordTokens(text: string, limit: number): { text: string; truncated: boolean } {
  let seen = 0;
  for (const match of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    if (++seen > limit) return { text: text.slice(0, match.index).trimEnd(), truncated: true };
  }
  return { text, truncated: false };
}

/**
 * The built-in chat answer, with `stop` applied before `max_tokens` (OpenAI's order: a stop ends
 * generation). Retrieval over a 1 MiB conversation is most of a second, so it is written as steps
 * for work-in-slices.ts.
 */
export function* extractiveChat(body: ChatCompletionsBody): Steps<ExtractiveChatAnswer> {
  const stopped = applyStop(yield* composeAnswer(body.messages), body.stop);
  const limit = body.max_completion_tokens ?? body.max_tokens ?? undefined;
  const limited = limit === undefined ? { text: stopped.text, truncated: false } : truncateToWordTokens(stopped.text, limit);
  let promptTokens = 0;
  for (const message of body.messages) {
    promptTokens += countWordTokens(messageText(message));
    yield;
  }
  return { content: limited.text, finishReason: limited.truncated ? 'length' : 'stop', promptTokens, completionTokens: countWordTokens(limited.text) };
}

/** The answer in stream pieces: a sentence's words with their trailing white space, so pieces join to the content. */
export function streamPieces(content: string): string[] {
  return content.match(/\s+|\S+\s*/g) ?? [];
}
