import type { ChatCompletion, ChatCompletionChunk, ChatCompletionsBody, ChatStreamEvent, InferenceUsage, SseMessage } from '@svc/schemas';
import type { RequestContext } from '../../http/request-context.ts';

/** How a funded call ended: its answer and what it used, or the code it failed with. */
export type FundingOutcome = { ok: true; completion: ChatCompletion; usage: InferenceUsage } | { ok: false; code: string };

/** An answer given instead of the handler's: a replay, a payment challenge, a refused settlement. */
export interface FundingAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * What settling decided: nothing to add (void), headers to send with the answer (a payment
 * receipt), or an answer that replaces the handler's (payment failed at settlement: the answer
 * is withheld). Only a step that settles before delivery can replace the answer.
 */
export type SettleVerdict = void | { headers?: Record<string, string>; replace?: FundingAnswer };

/**
 * When a step is told the outcome of a stream. `after-delivery` (credits): when the stream
 * ends, so a call is charged only once its last event went out. `before-delivery` (x402): the
 * stream is run to its end first and the step settles on the whole answer before the first
 * event is sent, so a payment that fails to settle withholds the answer and a failed answer is
 * never charged. JSON answers are settled before they are sent either way.
 */
export type SettlementTiming = 'after-delivery' | 'before-delivery';

/**
 * What a funding step decides before the handler runs: go ahead (and be told the outcome once,
 * to commit or release what it reserved), or answer for the handler (a replay, a payment challenge).
 */
export type FundingDecision =
  | { kind: 'proceed'; settle(outcome: FundingOutcome): Promise<SettleVerdict>; headers?: Record<string, string>; timing?: SettlementTiming }
  | ({ kind: 'answer' } & FundingAnswer);

/**
 * One way of paying for a call: prepaid credits and x402 are two. Data in, decision out, no Koa:
 * the route that uses it wraps an ordinary handler, which never learns who paid.
 */
export interface FundingStep {
  reserve(body: ChatCompletionsBody, request: RequestContext): Promise<FundingDecision>;
}

type ChatAnswer = ChatCompletion | AsyncIterable<SseMessage<ChatStreamEvent>>;
type ChatHandler = (body: ChatCompletionsBody, request: RequestContext) => Promise<ChatAnswer>;

const isStream = (answer: ChatAnswer): answer is AsyncIterable<SseMessage<ChatStreamEvent>> =>
  typeof (answer as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';

/** The completion a stream amounts to: what a replay of a streamed call answers as JSON, one choice per `index` (n > 1). */
export function assembleCompletion(chunks: readonly ChatCompletionChunk[]): ChatCompletion {
  const first = chunks[0]!;
  const choices = new Map<number, { content: string; finish: ChatCompletion['choices'][number]['finish_reason'] }>();
  let usage: InferenceUsage | undefined;
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      let assembled = choices.get(choice.index);
      if (!assembled) choices.set(choice.index, (assembled = { content: '', finish: null }));
      assembled.content += choice.delta.content ?? '';
      if (choice.finish_reason) assembled.finish = choice.finish_reason;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  if (choices.size === 0) choices.set(0, { content: '', finish: null });
  return {
    id: first.id,
    object: 'chat.completion',
    created: first.created,
    model: first.model,
    choices: [...choices]
      .sort(([a], [b]) => a - b)
      .map(([index, { content, finish }]) => ({ index, message: { role: 'assistant' as const, content }, finish_reason: finish, logprobs: null })),
    ...(usage ? { usage } : {}),
  };
}

const usageOf = (completion: ChatCompletion): InferenceUsage => completion.usage ?? { prompt_tokens: 0, total_tokens: 0 };

const errorCode = (error: unknown) => (error as { code?: string }).code ?? 'internal_error';

/** Sends the handler's answer with the step's headers, unless settling replaced it. */
function delivered(decision: { headers?: Record<string, string> }, verdict: SettleVerdict, body: unknown): FundingAnswer {
  if (verdict?.replace) return verdict.replace;
  return { status: 200, body, headers: { ...decision.headers, ...verdict?.headers } };
}

/**
 * A funded stream always asks its engine for usage (`stream_options.include_usage`), so the
 * receipt, the usage export and the key's token count hold the real tokens; the caller who did not
 * ask gets the stream it asked for: the usage chunk withheld, usage stripped from the others.
 */
const withUsageAsked = (body: ChatCompletionsBody): ChatCompletionsBody =>
  body.stream === true && body.stream_options?.include_usage !== true ? { ...body, stream_options: { ...body.stream_options, include_usage: true } } : body;

/** The event as the caller asked for it: undefined for a usage chunk it did not ask for. */
function asAsked(event: SseMessage<ChatStreamEvent>, withoutUsage: boolean): SseMessage<ChatStreamEvent> | undefined {
  if (!withoutUsage || event.data === '[DONE]' || !event.data.usage) return event;
  const { usage: _withheld, ...rest } = event.data;
  if (rest.choices.length === 0 && !rest.error) return undefined;
  return { ...event, data: rest };
}

/** Runs a stream to its end, keeping its events: the outcome is known before anything is sent. */
async function drain(
  events: AsyncIterable<SseMessage<ChatStreamEvent>>,
  withoutUsage: boolean,
): Promise<{ events: SseMessage<ChatStreamEvent>[]; outcome: FundingOutcome }> {
  const kept: SseMessage<ChatStreamEvent>[] = [];
  const chunks: ChatCompletionChunk[] = [];
  let failure: string | undefined;
  let done = false;
  for await (const event of events) {
    const sent = asAsked(event, withoutUsage);
    if (sent) kept.push(sent);
    if (event.data === '[DONE]') done = true;
    else if (event.data.error) failure ??= event.data.error.code;
    else chunks.push(event.data);
  }
  // As after delivery: only a stream that reached [DONE] without an error is a whole answer.
  if (failure !== undefined || !done || chunks.length === 0) return { events: kept, outcome: { ok: false, code: failure ?? 'stream_incomplete' } };
  const completion = assembleCompletion(chunks);
  return { events: kept, outcome: { ok: true, completion, usage: usageOf(completion) } };
}

/**
 * A stream passed through and settled when it ends, however it ends. Declared once, not made per
 * call inside `runFunded`: a generator function made per call gets a new map in the old
 * generation, which keeps the request alive through young collections (docs/inference.md).
 */
async function* settledStream(
  events: AsyncIterable<SseMessage<ChatStreamEvent>>,
  settle: (outcome: FundingOutcome) => Promise<unknown>,
  withoutUsage: boolean,
): AsyncGenerator<SseMessage<ChatStreamEvent>> {
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
      const sent = asAsked(event, withoutUsage);
      if (sent) yield sent;
    }
  } catch (error) {
    outcome = { ok: false, code: errorCode(error) };
    throw error;
  } finally {
    await settle(outcome);
  }
}

async function* replay(events: readonly SseMessage<ChatStreamEvent>[]): AsyncGenerator<SseMessage<ChatStreamEvent>> {
  yield* events;
}

/**
 * Runs a chat handler under a funding step. JSON: settled after the answer is made (released if
 * the client left before it). Stream, settled after delivery: when the stream ends: committed
 * when it completed, released when it failed, the client left, or the consumer stopped early.
 * Stream, settled before delivery: run to its end, settled on the whole answer, then sent.
 */
export async function runFunded(step: FundingStep, handler: ChatHandler, body: ChatCompletionsBody, request: RequestContext): Promise<FundingAnswer> {
  const decision = await step.reserve(body, request);
  if (decision.kind === 'answer') return decision;
  let answer: ChatAnswer;
  const withoutUsage = withUsageAsked(body) !== body;
  try {
    answer = await handler(withUsageAsked(body), request);
  } catch (error) {
    await decision.settle({ ok: false, code: errorCode(error) });
    throw error;
  }
  if (!isStream(answer)) {
    if (request.signal.aborted) {
      await decision.settle({ ok: false, code: 'client_disconnected' });
      return { status: 200, body: answer, headers: decision.headers };
    }
    return delivered(decision, await decision.settle({ ok: true, completion: answer, usage: usageOf(answer) }), answer);
  }
  if (decision.timing === 'before-delivery') {
    let drained: Awaited<ReturnType<typeof drain>>;
    try {
      drained = await drain(answer, withoutUsage);
    } catch (error) {
      await decision.settle({ ok: false, code: errorCode(error) });
      throw error;
    }
    const outcome: FundingOutcome = request.signal.aborted ? { ok: false, code: 'client_disconnected' } : drained.outcome;
    return delivered(decision, await decision.settle(outcome), replay(drained.events));
  }
  return { status: 200, body: settledStream(answer, decision.settle, withoutUsage), headers: decision.headers };
}
