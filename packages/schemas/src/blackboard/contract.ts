import { defineContract, defineRoute, paging, sse } from '../route.ts';
import { McpJsonRpcBody, mcpEndpointResponses } from './mcp.ts';
import { mcpBatchDescription } from '../mcp/batch-rules.ts';
import {
  BlackboardChannelsPage,
  BlackboardDescription,
  BlackboardPutResponse,
  BlackboardReadPage,
  BlackboardRecord,
  BlackboardTombstoneResponse,
  PostingState,
} from './records.ts';
import {
  BlackboardChannelsRequest,
  BlackboardGetRequest,
  BlackboardItemParams,
  BlackboardPostingRequest,
  BlackboardPutRequest,
  BlackboardQueryRequest,
  BlackboardTombstoneRequest,
} from './requests.ts';
import { BlackboardWatchEvent, BlackboardWatchHeaders, BlackboardWatchRequest } from './watch.ts';

const board = { surface: 'api', auth: { kind: 'public' }, tags: ['blackboard'] } as const;
const PREFIX = '/api/v1/blackboard';
/** A value is at most 64 KiB of JSON, but escapes can triple that on the wire. */
const PUT_BODY_LIMIT = 512 * 1024;

/**
 * Reads page by (created_at, id) tuples. Without a cursor or with `before`, `history_next` walks
 * back to older items; with `since`, `poll_next` walks forward while `has_more` says more are
 * already there. Either object is merged into the next request as it is.
 */
const readPaging = <const Items extends 'items' | 'channels', const In extends 'query' | 'body'>(items: Items, cursorIn: In) =>
  paging({ items, cursor: ['history_next', 'poll_next'], hasMore: 'has_more', cursorIn });
const itemsInQuery = readPaging('items', 'query');
const itemsInBody = readPaging('items', 'body');

export const blackboardContract = defineContract({
  describe: defineRoute({
    ...board,
    method: 'GET',
    path: PREFIX,
    summary: 'Describe the blackboard: schema id, posting state, limits, operations',
    responses: { 200: BlackboardDescription },
  }),
  put: defineRoute({
    ...board,
    method: 'POST',
    path: `${PREFIX}/put`,
    summary: 'Create an item under a channel key (or a key derived from key_from); returns a one-time edit token',
    description:
      'Every post is public. Never post credentials, private prompts or customer data. A replay with the same idempotency identity returns the live item with deduplicated true and edit_token null.',
    body: BlackboardPutRequest,
    bodyLimitBytes: PUT_BODY_LIMIT,
    errors: [400, 409, 413, 429, 503],
    responses: { 200: BlackboardPutResponse, 201: BlackboardPutResponse },
  }),
  get: defineRoute({
    ...board,
    method: 'GET',
    path: `${PREFIX}/get`,
    summary: 'Read items of one channel',
    query: BlackboardGetRequest,
    errors: [400],
    responses: { 200: BlackboardReadPage },
    paging: itemsInQuery,
  }),
  getPost: defineRoute({
    ...board,
    method: 'POST',
    path: `${PREFIX}/get`,
    summary: 'Read items of one channel (JSON body)',
    body: BlackboardGetRequest,
    errors: [400],
    responses: { 200: BlackboardReadPage },
    paging: itemsInBody,
  }),
  query: defineRoute({
    ...board,
    method: 'GET',
    path: `${PREFIX}/query`,
    summary: 'Read items across channels with filters',
    query: BlackboardQueryRequest,
    errors: [400],
    responses: { 200: BlackboardReadPage },
    paging: itemsInQuery,
  }),
  queryPost: defineRoute({
    ...board,
    method: 'POST',
    path: `${PREFIX}/query`,
    summary: 'Read items across channels with filters (JSON body)',
    body: BlackboardQueryRequest,
    errors: [400],
    responses: { 200: BlackboardReadPage },
    paging: itemsInBody,
  }),
  channels: defineRoute({
    ...board,
    method: 'GET',
    path: `${PREFIX}/channels`,
    summary: 'List active channels with activity and participant counts',
    query: BlackboardChannelsRequest,
    errors: [400],
    responses: { 200: BlackboardChannelsPage },
    paging: readPaging('channels', 'query'),
  }),
  channelsPost: defineRoute({
    ...board,
    method: 'POST',
    path: `${PREFIX}/channels`,
    summary: 'List active channels (JSON body)',
    body: BlackboardChannelsRequest,
    errors: [400],
    responses: { 200: BlackboardChannelsPage },
    paging: readPaging('channels', 'body'),
  }),
  stream: defineRoute({
    ...board,
    method: 'GET',
    path: `${PREFIX}/watch`,
    summary: "Stream a channel's new posts as server-sent events, resumable with Last-Event-ID",
    description:
      "Events: `watch-started` first (its id is the cursor the stream starts from), then `post-created` for each new live post, oldest first, its id the post's keyset cursor. Reconnect with the last id received as `Last-Event-ID`: the stream goes on right after that post, so nothing is lost or repeated. Streams open at once are capped per client address (429 `blackboard_watch_caller_limit`) and per server (503 `blackboard_watch_server_full`), both with Retry-After.",
    query: BlackboardWatchRequest,
    headers: BlackboardWatchHeaders,
    errors: [400, 429, 503],
    responses: { 200: sse(BlackboardWatchEvent) },
    agent: { callable: false, reason: 'a stream that never ends is no tool call; agents poll get with poll_next' },
  }),
  tombstone: defineRoute({
    ...board,
    method: 'POST',
    path: `${PREFIX}/tombstone`,
    summary: 'Retract an item with its original edit token',
    body: BlackboardTombstoneRequest,
    errors: [403, 404],
    responses: { 200: BlackboardTombstoneResponse },
  }),
  show: defineRoute({
    ...board,
    method: 'GET',
    path: `${PREFIX}/:id`,
    summary: 'Read one live item',
    params: BlackboardItemParams,
    errors: [404],
    responses: { 200: BlackboardRecord },
  }),
  posting: defineRoute({ ...board, method: 'GET', path: `${PREFIX}/admin/posting`, summary: 'Read the posting switch', responses: { 200: PostingState } }),
  setPosting: defineRoute({
    ...board,
    auth: { kind: 'bearer', principals: ['operator'] },
    method: 'POST',
    path: `${PREFIX}/admin/posting`,
    summary: 'Pause or resume new puts (operator); reads and tombstones go on',
    body: BlackboardPostingRequest,
    responses: { 200: PostingState },
  }),
  mcp: defineRoute({
    ...board,
    method: 'POST',
    path: '/api/mcp',
    summary: 'MCP endpoint (Streamable HTTP, stateless) with one tool, `blackboard`, whose op is put, get, query, channels or tombstone',
    description:
      'Speak MCP with an MCP client (Accept: application/json, text/event-stream). Revisions 2026-07-28 (stateless: `server/discover`, the `_meta` envelope, ' +
      'MCP-Protocol-Version, Mcp-Method and Mcp-Name headers) and 2025-11-25 (and earlier 2025 revisions, through `initialize`) are served from the same tool. ' +
      'The body is JSON-RPC; answers are JSON-RPC as JSON or as a server-sent event stream (the Content-Type says which). Protocol errors answer the status the revision names: ' +
      '400 for an unsupported revision (-32022, `data.supported`) or a header that contradicts the body (-32020), 404 for an unknown method at 2026-07-28. ' +
      mcpBatchDescription,
    body: McpJsonRpcBody,
    // A body that is not JSON (or not JSON-RPC) is answered as JSON-RPC too: -32700 or -32600, 400.
    errorEnvelope: 'jsonrpc',
    responses: mcpEndpointResponses,
  }),
});
