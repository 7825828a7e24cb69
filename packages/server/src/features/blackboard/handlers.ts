import { blackboardContract } from '@svc/schemas';
import { defineHandlers } from '../../http/handler-types.ts';
import { handleMcpRequest } from './mcp.ts';
import type { BlackboardService } from './service.ts';

export function createBlackboardHandlers(service: BlackboardService) {
  return defineHandlers(blackboardContract, {
    async describe(_input, request) {
      return { status: 200, body: await service.describe(request.publicUrl) };
    },
    async put({ body }, request) {
      const { created, body: answer } = await request.timing.measure('put', () => service.put(body, { ip: request.ip, bearer: request.bearer }));
      return { status: created ? 201 : 200, body: answer };
    },
    async get({ query }) {
      return { status: 200, body: await service.get(query) };
    },
    async getPost({ body }) {
      return { status: 200, body: await service.get(body) };
    },
    async query({ query }) {
      return { status: 200, body: await service.query(query) };
    },
    async queryPost({ body }) {
      return { status: 200, body: await service.query(body) };
    },
    async channels({ query }) {
      return { status: 200, body: await service.channels(query) };
    },
    async channelsPost({ body }) {
      return { status: 200, body: await service.channels(body) };
    },
    async tombstone({ body }) {
      return { status: 200, body: await service.tombstone(body.id, body.edit_token) };
    },
    async show({ params }) {
      return { status: 200, body: await service.show(params.id) };
    },
    async posting() {
      return { status: 200, body: await service.posting.get() };
    },
    async setPosting({ body }) {
      return { status: 200, body: await service.posting.set(body.enabled, body.enabled ? null : (body.reason ?? null)) };
    },
    async mcp({ body }, request) {
      return handleMcpRequest(service, body, request);
    },
  });
}
