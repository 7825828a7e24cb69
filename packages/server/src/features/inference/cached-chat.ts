import type { ChatCompletion, ChatCompletionsBody } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { chatCompletion } from './chat.ts';
import { chatMayBeCached, type CachedAnswer, type ResponseCache } from './response-cache.ts';

type ChatAnswer = Awaited<ReturnType<typeof chatCompletion>>;

/**
 * A chat completion through the response cache when the request opted in (not streamed,
 * temperature 0, `x-svc-cache-enabled: true`); any other request goes straight to the engine.
 * The free route and the credit route both call this, so a paid call is funded around it: a hit
 * is still one successful call to its funding step. `serialized`: see ResponseCache.through.
 */
export async function cachedChatCompletion(
  deps: Pick<ServerDeps, 'models' | 'usage'>,
  cache: ResponseCache,
  headers: { 'x-svc-cache-enabled'?: string | undefined },
  body: ChatCompletionsBody,
  request: RequestContext,
  options: { serialized: boolean },
): Promise<CachedAnswer<ChatAnswer>> {
  if (!chatMayBeCached(headers, body)) return { body: await chatCompletion(deps, body, request) };
  const resolved = deps.models.resolve('chat', body.model);
  // Not streamed (chatMayBeCached), so the engine answers one completion object.
  return cache.through(request, { operation: 'chat', resolved, body }, () => chatCompletion(deps, body, request) as Promise<ChatCompletion>, options);
}
