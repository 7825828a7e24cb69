import type { ChatCompletion, ChatCompletionChunk, ChatCompletionsBody, ChatStreamEvent, InferenceUsage, SseMessage } from '@svc/schemas';
import type { RequestContext } from '../../http/request-context.ts';

/** How a funded call ended: its answer and what it used, or the code it failed with. */
export type FundingOutcome = { ok: true; completion: ChatCompletion; usage: InferenceUsage } | { ok: false; code: string };

/**
 * What a funding step decides before the handler runs: go ahead (and be told the outcome once,
 * to commit or release what it reserved), or answer for the handler (a replay, a payment challenge).
 */
export type FundingDecision =
  | { kind: 'proceed'; settle(outcome: FundingOutcome): Promise<void>; headers?: Record<string, string> }
  | { kind: 'answer'; status: number; body: unknown; headers?: Record<string, string> };

/**
 * One way of paying for a call: prepaid credits and x402 are two. Data in, decision out, no Koa:
 * the route that uses it wraps an ordinary handler, which never learns who paid.
 */
export interface FundingStep {
  reserve(body: ChatCompletionsBody, request: RequestContext): Promise<FundingDecision>;
}

type ChatAnswer = ChatCompletion | AsyncIterable<SseMessage<ChatStreamEvent>>;
type ChatHandler = (body: ChatCompletionsBody, request: RequestContext) => Promise<ChatAnswer>;

const isStream = (answer: ChatAnswer): answer is AsyncIterable<SseMessage<ChatStreamEvent>> => typeof (answer as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';

/** The completion a stream amounts to: what a replay of a streamed call answers as JSON. */
export function assembleCompletion(chunks: readonly ChatCompletionChunk[]): ChatCompletion {
  const first = chunks[0]!;
  let content = '';
  let finish: ChatCompletion['choices'][number]['finish_reason'] = null;
  let usage: InferenceUsage | undefined;
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? '';
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  return {
    id: first.id,
    object: 'chat.completion',
    created: first.created,
    model: first.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish, logprobs: null }],
    ...(usage ? { usage } : {}),
  };
}

const usageOf = (completion: ChatCompletion): InferenceUsage => completion.usage ?? { prompt_tokens: 0, total_tokens: 0 };

/**
 * Runs a chat handler under a funding step. JSON: settled after the answer is made (released if
 * the client left before it). Stream: settled when the stream ends: committed when it completed,
 * released when it failed, the client left, or the consumer stopped early.
 */
export async function runFunded(step: FundingStep, handler: ChatHandler, body: ChatCompletionsBody, request: RequestContext): Promise<{ status: number; body: unknown; headers?: Record<string, string> }> {
  const decision = await step.reserve(body, request);
  if (decision.kind === 'answer') return decision;
  let answer: ChatAnswer;
  try {
    answer = await handler(body, request);
  } catch (error) {
    await decision.settle({ ok: false, code: (error as { code?: string }).code ?? 'internal_error' });
    throw error;
  }
  if (!isStream(answer)) {
    if (request.signal.aborted) {
      await decision.settle({ ok: false, code: 'client_disconnected' });
      return { status: 200, body: answer, headers: decision.headers };
    }
    await decision.settle({ ok: true, completion: answer, usage: usageOf(answer) });
    return { status: 200, body: answer, headers: decision.headers };
  }
  const events = answer;
  const settle = decision.settle;
  async function* settledStream(): AsyncGenerator<SseMessage<ChatStreamEvent>> {
    const chunks: ChatCompletionChunk[] = [];
    let outcome: FundingOutcome = { ok: false, code: 'client_disconnected' };
    try {
      for await (const event of events) {
        if (event.data === '[DONE]') {
          if (chunks.length > 0 && outcome.ok === false && outcome.code === 'client_disconnected') {
            const completion = assembleCompletion(chunks);
            outcome = { ok: true, completion, usage: usageOf(completion) };
          }
        } else if (event.data.error) {
          outcome = { ok: false, code: event.data.error.code };
        } else {
          chunks.push(event.data);
        }
        yield event;
      }
    } catch (error) {
      outcome = { ok: false, code: (error as { code?: string }).code ?? 'internal_error' };
      throw error;
    } finally {
      await settle(outcome);
    }
  }
  return { status: 200, body: settledStream(), headers: decision.headers };
}
