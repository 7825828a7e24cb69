import { modelsContract } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';

export function createModelsHandlers(deps: ServerDeps) {
  return defineHandlers(modelsContract, {
    async list() {
      const { engines, models } = deps.models.list();
      return { status: 200, body: { object: 'list', engines, data: models } };
    },
    async get({ params }) {
      return { status: 200, body: deps.models.get(params.model) };
    },
    async cache() {
      return { status: 200, body: { caches: deps.caches.list() } };
    },
  });
}
