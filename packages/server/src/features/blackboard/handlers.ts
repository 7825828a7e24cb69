import { blackboardContract, blackboardLimits } from '@svc/schemas';
import type { ContractDispatch } from '../../http/dispatch.ts';
import { defineHandlers, withAdmission } from '../../http/handler-types.ts';
import { createMcpEndpoint } from './mcp.ts';
import type { BlackboardService } from './service.ts';
import { watchPosts, type WatchSlots } from './watch-stream.ts';

export function createBlackboardHandlers(service: BlackboardService, dispatch: ContractDispatch, watch: { slots: WatchSlots; pollMs: number }) {
  const handleMcpRequest = createMcpEndpoint(dispatch);
  return defineHandlers(blackboardContract, {
    async describe(_input, request) {
      return { status: 200, body: await service.describe(request.publicUrl) };
    },
    async put({ body }, request) {
      // The Idempotency-Key header (which @svc/client sends once per logical request, reused by
      // its retries) stands in when the body names no idempotency_key, so a retried put is not doubled.
      const header = request.headers['idempotency-key'];
      const fromHeader = typeof header === 'string' && header.length >= 1 && header.length <= blackboardLimits.idempotencyKeyMaxChars ? header : undefined;
      const effective =
        fromHeader && body.idempotency_key === undefined && body.value.idempotency_key === undefined ? { ...body, idempotency_key: fromHeader } : body;
      const { created, body: answer } = await request.timing.measure('put', () => service.put(effective, { ip: request.ip, bearer: request.bearer }));
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
    // The slot is taken before any read and given back when the response closes (the adapter's admission).
    stream: withAdmission(
      async (request) => watch.slots.take(request.ip),
      async ({ query, headers }, request) => {
        // Last-Event-ID (a reconnect) wins over the query's starting point (the first connect's).
        const from = headers['last-event-id'] ?? (query.since === undefined ? undefined : { since: query.since, since_id: query.since_id });
        const events = watchPosts({
          key: query.key,
          from,
          read: (lookup) => service.get(lookup),
          wake: service.wake,
          pollMs: watch.pollMs,
          signal: request.signal,
        });
        return { status: 200, body: events };
      },
    ),
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
      return handleMcpRequest(body, request);
    },
  });
}
