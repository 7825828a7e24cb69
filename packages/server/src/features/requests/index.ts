import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import { createRequestsHandlers } from './handlers.ts';
import { RequestStore } from './request-store.ts';

export { RequestStore, type FiledRequest } from './request-store.ts';

/** Catalog requests: the store every filing path shares, and the /v1 routes over it. */
export function createRequestsFeature(deps: Pick<ServerDeps, 'database' | 'config' | 'publicUrls'>) {
  const store = new RequestStore(deps.database.sequelize, deps.config.requests, () => deps.publicUrls().baseUrl);
  return { handlers: { requests: createRequestsHandlers(store) }, store } satisfies Feature<'requests'>;
}
