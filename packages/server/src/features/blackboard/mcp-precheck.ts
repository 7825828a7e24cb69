import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { mcpBatchRules } from '@svc/schemas';

/** The stateless revision, served by the SDK's modern path. */
export const MODERN_MCP_REVISION = '2026-07-28';
/** Every revision the endpoint serves, newest first: what `data.supported` and the server card list. */
export const MCP_SUPPORTED_REVISIONS: readonly string[] = [MODERN_MCP_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS];

const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
/** UnsupportedProtocolVersionError (2026-07-28 schema); -32602 is JSON-RPC's invalid params. */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;
const INVALID_PARAMS = -32602;
/** JSON-RPC's invalid request: what the SDK answers a batch its revision does not take (400). */
const INVALID_REQUEST = -32600;

type JsonRpcMessage = { id?: string | number | null; method?: unknown; params?: { _meta?: Record<string, unknown>; arguments?: unknown } };

export interface McpRefusal {
  status: 200 | 400;
  body: { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data?: unknown } };
}

function refusal(status: 200 | 400, message: JsonRpcMessage, code: number, text: string, data?: unknown): McpRefusal {
  return { status, body: { jsonrpc: '2.0', id: message.id ?? null, error: { code, message: text, ...(data !== undefined ? { data } : {}) } } };
}

/**
 * A batch's bounds, checked before anything in it is read further (`mcpBatchRules`): a revision
 * without batches refuses one as the SDK's modern path does (400 -32600); too many messages are
 * refused whole, so nothing in the batch (a cancellation, a call) has been done.
 */
function refuseBatch(body: unknown[], versionHeader: string | undefined): McpRefusal | undefined {
  // The transport specification: a request without the header is read as 2025-03-26.
  const revision = versionHeader ?? mcpBatchRules.revisionWithBatches;
  if (revision !== mcpBatchRules.revisionWithBatches)
    return refusal(
      400,
      {},
      INVALID_REQUEST,
      `Invalid Request: MCP ${revision} has no JSON-RPC batches (only ${mcpBatchRules.revisionWithBatches} has); send each message in a request of its own.`,
      {
        code: 'mcp_batch_not_supported',
      },
    );
  if (body.length > mcpBatchRules.maxMessages)
    return refusal(
      400,
      {},
      INVALID_REQUEST,
      `Invalid Request: a batch holds at most ${mcpBatchRules.maxMessages} messages, this one ${body.length}; nothing in it was done.`,
      {
        code: 'mcp_batch_too_large',
        max_messages: mcpBatchRules.maxMessages,
      },
    );
  return undefined;
}

/**
 * What the SDK does not answer the way the revisions' text says, answered before it runs:
 * - a revision the endpoint does not serve (header or `_meta` claim) is 400 -32022 listing every
 *   revision it does serve, both eras: a dual-era server's list (versioning page), where the SDK's
 *   legacy transport answers -32000 and its modern path lists only 2026-07-28;
 * - a batch at a revision without batches, or past the batch's message cap (refuseBatch);
 * - `tools/call` arguments that are not an object are -32602 with a sentence, not a schema dump.
 */
export function precheckMcpRequest(body: unknown, versionHeader: string | undefined): McpRefusal | undefined {
  const message = (Array.isArray(body) ? body[0] : body) as JsonRpcMessage | undefined;
  if (!message || typeof message !== 'object') return undefined;
  const claimed = message.params?._meta?.[META_VERSION];
  for (const requested of [versionHeader, claimed]) {
    if (requested === undefined || MCP_SUPPORTED_REVISIONS.includes(requested as string)) continue;
    return refusal(
      400,
      message,
      UNSUPPORTED_PROTOCOL_VERSION,
      `Unsupported protocol version: ${String(requested)}. This server speaks ${MCP_SUPPORTED_REVISIONS.join(', ')}.`,
      {
        supported: MCP_SUPPORTED_REVISIONS,
        requested,
      },
    );
  }
  if (Array.isArray(body)) {
    const refused = refuseBatch(body, versionHeader);
    if (refused) return refused;
  }
  const args = message.params?.arguments;
  if (message.method === 'tools/call' && args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
    const got = args === null ? 'null' : Array.isArray(args) ? 'an array' : `a ${typeof args}`;
    return refusal(200, message, INVALID_PARAMS, `Invalid params: tools/call arguments must be a JSON object of the tool's arguments, got ${got}.`);
  }
  return undefined;
}
