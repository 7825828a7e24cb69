import type { ChatCompletion, ChatCompletionChunk, ChatCompletionsRequest, ChatStreamEvent, Contract, SseMessage } from '@svc/schemas';
import { SvcError } from '../errors.ts';
import type { ClientOf } from '../derive.ts';
import type { CallOptions } from '../transport.ts';

type StreamingRequest = ChatCompletionsRequest & { stream: true };
type PlainRequest = ChatCompletionsRequest & { stream?: false | null };

/** A chat stream: chunks as the server sends them, ending at `[DONE]`. Single use; breaking out aborts the request. */
export type ChatCompletionStream = AsyncIterable<ChatCompletionChunk>;

export interface ChatCompletionsHelpers {
  /**
   * A chat completion, like openai-node's `client.chat.completions.create`: the completion, or
   * with `stream: true` an async iterable of chunks. A chunk carrying an `error` (the server's
   * way of failing after the stream started) is thrown as an SvcError with its code.
   *
   * @example
   * ```ts
   * const stream = await svc.chat.completions.create({ messages: [{ role: 'user', content: 'What is svc?' }], stream: true });
   * for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta.content ?? '');
   * ```
   */
  create(request: StreamingRequest, options?: CallOptions): Promise<ChatCompletionStream>;
  create(request: PlainRequest, options?: CallOptions): Promise<ChatCompletion>;
  create(request: ChatCompletionsRequest, options?: CallOptions): Promise<ChatCompletion | ChatCompletionStream>;
}

/** Reads the server's chat events as chunks: stops at `[DONE]`, throws an error chunk. */
export async function* chunksOf(events: AsyncIterable<SseMessage<ChatStreamEvent>>): AsyncGenerator<ChatCompletionChunk> {
  for await (const event of events) {
    if (event.data === '[DONE]') return;
    if (event.data.error) throw new SvcError(event.data.error.message, { code: event.data.error.code, body: event.data });
    yield event.data;
  }
}

export function createChatHelpers(inference: ClientOf<Contract>['inference']): { completions: ChatCompletionsHelpers } {
  const create = async (request: ChatCompletionsRequest, options?: CallOptions) => {
    const answer = await inference.chat({ body: request }, options);
    if (typeof (answer as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') return chunksOf(answer as AsyncIterable<SseMessage<ChatStreamEvent>>);
    return answer as ChatCompletion;
  };
  return { completions: { create: create as ChatCompletionsHelpers['create'] } };
}
