import { responsesContract, type ResponseObject } from '@svc/schemas';
import { defineHandlers } from '../../http/handler-types.ts';
import { principalKey } from '../identity/index.ts';
import { cacheHeaders, chatMayBeCached, type ResponseCache } from '../inference/index.ts';
import { backgroundTask, cancelBackground, followBackground, responseOfTask } from './background.ts';
import { createResponse, type ResponsesDeps } from './create-response.ts';
import { responseNotFound } from './response-store.ts';

/** The Responses routes: create (JSON or streamed), and the caller's stored responses. */
export function createResponsesHandlers(deps: ResponsesDeps, responseCache: ResponseCache) {
  return defineHandlers(responsesContract, {
    async create({ body, headers }, request) {
      if (!chatMayBeCached(headers, body)) return { status: 200, body: await createResponse(deps, body, request) };
      // The capability createResponse serves it with: passed through to a Responses upstream, or translated to chat.
      const capability = deps.models.responsesCapability(body.model);
      const call = { operation: 'responses', resolved: deps.models.resolve(capability, body.model), body };
      const owner = principalKey(request.principal);
      // A continuation of a response that is gone is a 404, cached or not: the cache never answers for a conversation svc no longer holds.
      if (body.previous_response_id && !(await deps.store.has(owner, body.previous_response_id))) throw responseNotFound(body.previous_response_id);
      // Not streamed (chatMayBeCached), so createResponse answers one response object.
      const answer = await responseCache.through(request, call, () => createResponse(deps, body, request) as Promise<ResponseObject>, {
        serialized: true,
        // A hit answers a stored response's id again: once that response is deleted, the hit would name what GET answers 404.
        stands: async (text) => {
          const cached = JSON.parse(text.toString('utf8')) as Pick<ResponseObject, 'id' | 'store'>;
          return !cached.store || (await deps.store.has(owner, cached.id));
        },
      });
      return { status: 200, body: answer.body, headers: cacheHeaders(answer.cache) ?? {} };
    },
    async retrieve({ params, query }, request) {
      const owner = principalKey(request.principal);
      if (query.stream) return { status: 200, body: await followBackground(deps.tasks, params.response_id, owner, query.starting_after, request.signal) };
      // A background response is read from its task until it ends, and from there on too (the task has how it ended, cancelled included).
      const task = await backgroundTask(deps.tasks, params.response_id, owner);
      if (task) return { status: 200, body: responseOfTask(task) };
      return { status: 200, body: await deps.store.response(owner, params.response_id) };
    },
    async cancel({ params }, request) {
      return { status: 200, body: await cancelBackground(deps.tasks, params.response_id, principalKey(request.principal), request.signal) };
    },
    async delete({ params }, request) {
      await deps.store.delete(principalKey(request.principal), params.response_id);
      return { status: 200, body: { id: params.response_id, object: 'response.deleted', deleted: true } };
    },
    async inputItems({ params, query }, request) {
      return { status: 200, body: await deps.store.inputItems(principalKey(request.principal), params.response_id, query) };
    },
    async webhookDeliveries({ query }, { principal }) {
      // The operator reads every delivery; an agent those of the responses its keys made, to their own endpoints.
      const owner = principal.kind === 'operator' ? undefined : principalKey(principal);
      return { status: 200, body: await deps.webhooks.page(query.limit, query.cursor, { owner, credentialId: query.credential_id }) };
    },
  });
}
