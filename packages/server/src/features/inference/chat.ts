import type { ChatCompletion, ChatCompletionsBody, ChatStreamEvent, SseMessage } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { ServiceError } from '../../service-error.ts';
import type { ChatChunkStream } from '../../inference/provider.ts';
import { chatStreamEvents } from './chat-stream.ts';
import { callWithFallbacks, invokeModel, reportUsage } from './invoke-model.ts';

/**
 * One chat completion, JSON or streamed. Written as a plain function of (body, request) so a
 * funding step (credits, x402) can wrap it without the handler knowing who pays. A stream's
 * usage is reported to the usage hook when it ends, however it ends (partial on failure or abort).
 */
export async function chatCompletion(
  deps: Pick<ServerDeps, 'models' | 'usage'>,
  body: ChatCompletionsBody,
  request: RequestContext,
): Promise<ChatCompletion | AsyncIterable<SseMessage<ChatStreamEvent>>> {
  if (!body.stream) {
    const { value } = await invokeModel(deps, 'chat', 'chat', body.model, request, async ({ model, provider }, options) => {
      if (!provider.chat) throw new ServiceError('model_operation_unsupported', `Engine ${provider.id} cannot serve chat.`);
      const completion = await provider.chat({ model, body }, options);
      return { value: completion, usage: completion.usage ?? { prompt_tokens: 0, total_tokens: 0 } };
    });
    return value;
  }
  const started = performance.now();
  const { value: chunks, served } = await callWithFallbacks<ChatChunkStream>(
    deps,
    'chat',
    'chat',
    body.model,
    request,
    async ({ model, provider }, options) => {
      if (!provider.chatStream) throw new ServiceError('model_operation_unsupported', `Engine ${provider.id} cannot serve chat.`);
      return { value: await provider.chatStream({ model, body }, options), usage: { prompt_tokens: 0, total_tokens: 0 } };
    },
    started,
  );
  return chatStreamEvents(chunks, body, served, request, (outcome) =>
    reportUsage(deps.usage, {
      operation: 'chat',
      resolved: served,
      usage: outcome.usage,
      started,
      request,
      ok: outcome.ok,
      ...(outcome.errorCode !== undefined ? { errorCode: outcome.errorCode } : {}),
    }),
  );
}
