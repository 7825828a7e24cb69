import { responsesContract } from '@svc/schemas';
import { defineHandlers } from '../../http/handler-types.ts';
import { principalKey } from '../identity/index.ts';
import { createResponse, type ResponsesDeps } from './create-response.ts';

/** The Responses routes: create (JSON or streamed), and the caller's stored responses. */
export function createResponsesHandlers(deps: ResponsesDeps) {
  return defineHandlers(responsesContract, {
    async create({ body }, request) {
      return { status: 200, body: await createResponse(deps, body, request) };
    },
    async retrieve({ params }, request) {
      return { status: 200, body: (await deps.store.get(principalKey(request.principal), params.response_id)).response };
    },
    async delete({ params }, request) {
      await deps.store.delete(principalKey(request.principal), params.response_id);
      return { status: 200, body: { id: params.response_id, object: 'response.deleted', deleted: true } };
    },
    async inputItems({ params, query }, request) {
      return { status: 200, body: await deps.store.inputItems(principalKey(request.principal), params.response_id, query) };
    },
  });
}
