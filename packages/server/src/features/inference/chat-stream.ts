import type { ChatCompletionChunk, ChatCompletionsBody, ChatStreamEvent, InferenceUsage, SseMessage } from '@svc/schemas';
import type { ResolvedModel } from '../models/index.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { isServiceError } from '../../service-error.ts';
import { tokenize } from '../../inference/hashed-embeddings.ts';
import type { ChatChunkStream } from '../../inference/provider.ts';

/** What the stream tells its caller when it ends: the usage (the engine's, or counted here) and how it ended. */
export interface ChatStreamOutcome {
  usage: InferenceUsage;
  ok: boolean;
  errorCode?: string;
}

/** Words of the conversation: the usage counted when an engine reports none (the built-in tokenizer). */
function promptWords(body: ChatCompletionsBody): number {
  let words = 0;
  for (const message of body.messages) {
    if (typeof message.content === 'string') words += tokenize(message.content).length;
    else if (Array.isArray(message.content)) for (const part of message.content) if (typeof part.text === 'string') words += tokenize(part.text).length;
  }
  return words;
}

/**
 * The chat route's stream in OpenAI's wire format, around an engine's chunks: data-only
 * `chat.completion.chunk` events, then `data: [DONE]`. The engine's usage chunk (empty `choices`)
 * reaches the caller only with `stream_options.include_usage`; when the engine sent none, one
 * counted in words is made. A failure after the start becomes a final chunk with a top-level
 * `error { code, message }` and `finish_reason: "error"` for each choice not yet finished
 * (OpenRouter's convention), then [DONE]. With `n > 1` the engine's chunks carry each choice's
 * `index` and pass through as they are.
 * `onEnd` runs once, however the stream ends (done, failed, or the client left), with the usage so far:
 * also when the client left before the first event was pulled, when the generator's own body
 * never runs (a funding step's reservation must still be released).
 */
export function chatStreamEvents(
  chunks: ChatChunkStream,
  body: ChatCompletionsBody,
  served: ResolvedModel,
  request: RequestContext,
  onEnd: (outcome: ChatStreamOutcome) => void,
): AsyncGenerator<SseMessage<ChatStreamEvent>> {
  let ended = false;
  let counted: () => InferenceUsage = () => ({ prompt_tokens: promptWords(body), completion_tokens: 0, total_tokens: promptWords(body) });
  const end = (outcome: ChatStreamOutcome) => {
    if (ended) return;
    ended = true;
    request.signal.removeEventListener('abort', endOnAbort);
    onEnd(outcome);
  };
  const endOnAbort = () => end({ usage: counted(), ok: false, errorCode: 'client_disconnected' });
  request.signal.addEventListener('abort', endOnAbort, { once: true });
  return streamEvents(chunks, body, served, request, (usage) => (counted = usage), end);
}

async function* streamEvents(
  chunks: ChatChunkStream,
  body: ChatCompletionsBody,
  served: ResolvedModel,
  request: RequestContext,
  useCounter: (counter: () => InferenceUsage) => void,
  end: (outcome: ChatStreamOutcome) => void,
): AsyncGenerator<SseMessage<ChatStreamEvent>> {
  const includeUsage = body.stream_options?.include_usage === true;
  let engineUsage: InferenceUsage | undefined;
  // The answer's text, counted in words only if the engine reports no usage (most upstreams do).
  let completionText = '';
  /** Choices (by index) the engine already finished: the error chunk ends only the others. */
  const finished = new Set<number>();
  /** The engine's last chunk: its id and time name the usage or error chunk svc adds. */
  let lastChunk: ChatCompletionChunk | undefined;
  const last = (): Pick<ChatCompletionChunk, 'id' | 'created'> =>
    lastChunk ? { id: lastChunk.id, created: lastChunk.created } : { id: `chatcmpl-${request.requestId}`, created: Math.floor(Date.now() / 1000) };
  const counted = (): InferenceUsage => {
    if (engineUsage) return engineUsage;
    const prompt = promptWords(body);
    const completion = tokenize(completionText).length;
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  };
  useCounter(counted);
  const usageChunk = (): ChatCompletionChunk => ({ ...last(), object: 'chat.completion.chunk', model: served.model.id, choices: [], usage: counted() });
  let outcome: ChatStreamOutcome | undefined;
  try {
    for await (const chunk of chunks) {
      lastChunk = chunk;
      for (const choice of chunk.choices) {
        if (typeof choice.delta?.content === 'string') completionText += choice.delta.content;
        if (choice.finish_reason) finished.add(choice.index);
      }
      if (!chunk.usage) {
        yield { event: 'message', data: chunk };
        continue;
      }
      engineUsage = chunk.usage;
      // The usage chunk is made at the end (or withheld); usage riding on a content chunk goes only to a caller that asked.
      if (chunk.choices.length === 0) continue;
      if (includeUsage) yield { event: 'message', data: chunk };
      else {
        const { usage: _withheld, ...withoutUsage } = chunk;
        yield { event: 'message', data: withoutUsage };
      }
    }
    if (includeUsage) yield { event: 'message', data: usageChunk() };
    outcome = { usage: counted(), ok: true };
  } catch (error) {
    if (request.signal.aborted) {
      outcome = { usage: counted(), ok: false, errorCode: 'client_disconnected' };
      return;
    }
    const known = isServiceError(error);
    if (!known) request.log.error({ err: error }, 'chat stream failed');
    const code = known ? error.code : 'internal_error';
    outcome = { usage: counted(), ok: false, errorCode: code };
    yield {
      event: 'message',
      data: {
        ...last(),
        object: 'chat.completion.chunk',
        model: served.model.id,
        choices: unfinishedChoices(body.n ?? 1, finished).map((index) => ({ index, delta: {}, finish_reason: 'error' as const })),
        ...(includeUsage ? { usage: counted() } : {}),
        error: { code, message: known ? error.message : 'The stream failed.' },
      },
    };
  } finally {
    // A client that left mid-stream returns the generator early: what was used so far still counts.
    end(outcome ?? { usage: counted(), ok: false, errorCode: 'client_disconnected' });
  }
  yield { event: 'message', data: '[DONE]' };
}

/** The indexes of the `n` choices not yet finished, in order. */
function unfinishedChoices(n: number, finished: ReadonlySet<number>): number[] {
  const open: number[] = [];
  for (let index = 0; index < n; index++) if (!finished.has(index)) open.push(index);
  return open;
}
