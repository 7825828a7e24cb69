import type { ChatCompletion, ChatCompletionsRequest, ChatStreamEvent, Contract, SseMessage } from '@svc/schemas';
import type { ClientOf } from '../derive.ts';
import { chunksOf, type ChatCompletionStream } from '../inference/chat.ts';
import type { CallOptions } from '../transport.ts';

export interface CreditChatOptions extends CallOptions {
  /** The call's Idempotency-Key; one is generated when absent and reused by every retry of this call. */
  idempotencyKey?: string;
}

export interface CreditChatHelpers {
  /**
   * A chat completion paid with one prepaid credit, like `svc.chat.completions.create`. A retry
   * (the client's own, or yours with the same `idempotencyKey`) answers the first result and is
   * never charged twice. No credit left: a `PaymentRequiredError` whose body names the checkout route.
   *
   * @example
   * ```ts
   * const completion = await svc.credits.chat.completions.create({ messages: [{ role: 'user', content: 'Hello' }] });
   * ```
   */
  create(request: ChatCompletionsRequest & { stream: true }, options?: CreditChatOptions): Promise<ChatCompletionStream>;
  create(request: ChatCompletionsRequest & { stream?: false | null }, options?: CreditChatOptions): Promise<ChatCompletion>;
}

export interface BillingHelpers {
  /**
   * Writes credit usage receipts as CSV (RFC 4180, header row) to a stream: every receipt
   * (`all`, the default) or one page. Memory stays flat however many there are.
   *
   * @example
   * ```ts
   * import { createWriteStream } from 'node:fs';
   * await svc.billing.exportUsageCsv(createWriteStream('usage.csv'));
   * ```
   */
  exportUsageCsv(
    destination: NodeJS.WritableStream | WritableStream<Uint8Array>,
    options?: { all?: boolean; cursor?: string; limit?: number } & CallOptions,
  ): Promise<void>;
}

export function createCreditsHelpers(methods: ClientOf<Contract>): { chat: ClientOf<Contract>['credits']['chat'] & { completions: CreditChatHelpers } } {
  const create = async (request: ChatCompletionsRequest, options: CreditChatOptions = {}) => {
    const idempotencyKey = options.idempotencyKey ?? crypto.randomUUID();
    const answer = await methods.credits.chat({ body: request, headers: { 'idempotency-key': idempotencyKey } }, { ...options, idempotencyKey });
    if (typeof (answer as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') return chunksOf(answer as AsyncIterable<SseMessage<ChatStreamEvent>>);
    return answer as ChatCompletion;
  };
  return { chat: Object.assign(methods.credits.chat, { completions: { create: create as CreditChatHelpers['create'] } }) };
}

export function createBillingHelpers(methods: ClientOf<Contract>): BillingHelpers {
  return {
    async exportUsageCsv(destination, options = {}) {
      const { all = true, cursor, limit = 100, ...call } = options;
      const answer = await methods.billing.usage({ query: { format: 'csv', all, limit, ...(cursor ? { cursor } : {}) } }, call);
      if (!(answer instanceof Response) || !answer.body) throw new TypeError('the server answered JSON where CSV was asked for');
      if (destination instanceof WritableStream) return answer.body.pipeTo(destination);
      const { Readable } = await import('node:stream');
      const { pipeline } = await import('node:stream/promises');
      // `end: false`: the destination may be stdout, which must stay open.
      await pipeline(Readable.fromWeb(answer.body as never), destination, { end: destination !== process.stdout });
    },
  };
}
