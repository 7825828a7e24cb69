import { randomUUID } from 'node:crypto';
import type { ChatCompletion, ChatCompletionChunk } from '@svc/schemas';
import { runInSlices } from '../../bounded/work-in-slices.ts';
import type { ChatRequest, EngineCallOptions } from '../provider.ts';
import { EXTRACTIVE_NOTE, extractiveChat, streamPieces, type ExtractiveChatAnswer } from './extractive-chat.ts';

const served = (model: ChatRequest['model']) => ({ engine: model.engine, model: model.id, method: model.method, note: EXTRACTIVE_NOTE });
const usageOf = (answer: ExtractiveChatAnswer) => ({
  prompt_tokens: answer.promptTokens,
  completion_tokens: answer.completionTokens,
  total_tokens: answer.promptTokens + answer.completionTokens,
});

/** The built-in chat answer as an OpenAI `chat.completion`; svc makes the id and the time. */
export async function extractiveChatCompletion({ model, body }: ChatRequest): Promise<ChatCompletion> {
  const answer = await runInSlices(extractiveChat(body));
  return {
    id: `chatcmpl-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: model.id,
    choices: [{ index: 0, message: { role: 'assistant', content: answer.content }, finish_reason: answer.finishReason, logprobs: null }],
    usage: usageOf(answer),
    system_fingerprint: null,
    svc: served(model),
  };
}

/**
 * The same answer as `chat.completion.chunk` objects: the role first, then the content a word at
 * a time, then the finish reason; with `stream_options.include_usage`, a last chunk with empty
 * `choices` and the usage. Stops at once when the client has gone.
 */
export async function* extractiveChatChunks({ model, body }: ChatRequest, { signal }: EngineCallOptions): AsyncGenerator<ChatCompletionChunk> {
  const answer = await runInSlices(extractiveChat(body), signal);
  const base = { id: `chatcmpl-${randomUUID()}`, object: 'chat.completion.chunk' as const, created: Math.floor(Date.now() / 1000), model: model.id };
  yield { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }] };
  for (const piece of streamPieces(answer.content)) {
    if (signal.aborted) return;
    yield { ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null, logprobs: null }] };
  }
  yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: answer.finishReason, logprobs: null }], svc: served(model) };
  if (body.stream_options?.include_usage) yield { ...base, choices: [], usage: usageOf(answer) };
}
