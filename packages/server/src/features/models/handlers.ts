import { modelsContract, RESPONSE_CACHE_NAME } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { ServiceError } from '../../service-error.ts';
import { principalKey } from '../identity/index.ts';

export function createModelsHandlers(deps: Pick<ServerDeps, 'caches' | 'models'>) {
  return defineHandlers(modelsContract, {
    async list() {
      const { engines, models } = deps.models.list();
      return { status: 200, body: { object: 'list', engines, data: models } };
    },
    async get({ params }) {
      return { status: 200, body: deps.models.get(params.model) };
    },
    async cache(_input, request) {
      // The operator sees the server; anyone else only its own share of the caches kept per principal.
      const owner = request.principal.kind === 'operator' ? undefined : principalKey(request.principal);
      return { status: 200, body: { caches: await deps.caches.list(owner) } };
    },
    async purgeCache({ query }) {
      const purged = await deps.caches.purge(RESPONSE_CACHE_NAME, query.model === undefined ? {} : { model: query.model });
      // The inference feature registers the response cache at start; without it the server was built wrong.
      if (!purged) throw new ServiceError('internal_error', 'The response cache is not registered.');
      return { status: 200, body: { name: RESPONSE_CACHE_NAME, purged_entries: purged.entries, purged_bytes: purged.bytes } };
    },
  });
}
