import { requestsContract, type CatalogRequestKind } from '@svc/schemas';
import { defineHandlers } from '../../http/handler-types.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { principalKey } from '../identity/index.ts';
import { moderateRequest } from './moderation.ts';
import type { CatalogRequestBody } from './normalise.ts';
import { openSourceRadar } from './radar.ts';
import type { RequestStore, RequestViewer } from './request-store.ts';

const viewerOf = (request: RequestContext): RequestViewer => ({ requester: principalKey(request.principal), operator: request.principal.kind === 'operator' });

export function createRequestsHandlers(store: RequestStore) {
  const submit = async (kind: CatalogRequestKind, body: CatalogRequestBody, request: RequestContext) => {
    const { receipt, replayed } = await store.fileFor(request.principal, kind, body, 'v1');
    if (!replayed) request.log.info({ catalogRequestId: receipt.request_id, kind }, 'catalog request filed');
    return { status: replayed ? (200 as const) : (201 as const), body: { ...receipt, replayed } };
  };
  return defineHandlers(requestsContract, {
    feature: ({ body }, request) => submit('feature', body, request),
    mirror: ({ body }, request) => submit('mirror', body, request),
    source: ({ body }, request) => submit('source', body, request),
    async status({ query }, request) {
      return {
        status: 200,
        body: await store.list(request.rows, { kind: query.kind, status: query.status, limit: query.limit, cursor: query.cursor }),
      };
    },
    async receipt({ params }, request) {
      return { status: 200, body: await store.receipt(params.request_id, viewerOf(request)) };
    },
    async moderate({ params, body }, request) {
      const receipt = await moderateRequest(store, params.request_id, body);
      request.log.info({ catalogRequestId: receipt.request_id, status: receipt.status }, 'catalog request moderated');
      return { status: 200, body: receipt };
    },
    async radar({ query }) {
      return { status: 200, body: await openSourceRadar(store.sequelize, query.limit) };
    },
  });
}
