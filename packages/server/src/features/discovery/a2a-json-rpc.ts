import type { z } from 'zod';
import type { JsonRpcError } from '@svc/schemas';

/**
 * What the two A2A answerers share, the public trial (a2a-rpc.ts) and the skills of a caller with
 * a credential (a2a-skill-rpc.ts): JSON-RPC 2.0 and A2A error codes, the request id, the first
 * problem of a refused envelope, and the error body with svc's code and request id.
 */

/** JSON-RPC 2.0 and A2A codes: TaskNotFound -32001, TaskNotCancelable -32002, VersionNotSupported -32009; -32000 for auth and limits. */
export const RPC = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  server: -32000,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  versionNotSupported: -32009,
} as const;

/** The A2A versions one implementation speaks: 1.0 and 0.3. */
export const SPOKEN_VERSIONS = new Set(['1.0', '0.3', '0.3.0']);

export type RpcId = string | number | null;

/** The request's id when it is one JSON-RPC allows; null otherwise (an answer must still name one). */
export function rpcIdOf(body: unknown): RpcId {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** `params.message.role: Invalid input: expected "user"`: the first problem, where it is. */
export function firstIssue(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0]!;
  return `${[prefix, ...issue.path].join('.')}: ${issue.message}`;
}

/** A JSON-RPC error whose `data` carries svc's stable code and the request id, as every svc error does. */
export function rpcError(id: RpcId, code: number, svcCode: string, message: string, requestId: string): JsonRpcError {
  return { jsonrpc: '2.0', id, error: { code, message, data: { code: svcCode, request_id: requestId } } };
}

/**
 * How both answerers open a request: one JSON-RPC envelope (never a batch), then the A2A version
 * its header asks for. Answers the parsed envelope, or the 400 refusal of the first that fails.
 */
export function openEnvelope<S extends z.ZodType>(
  schema: S,
  body: unknown,
  versionHeader: string | undefined,
  requestId: string,
): { ok: true; envelope: z.output<S> } | { ok: false; refusal: JsonRpcError } {
  // A2A's JSON-RPC binding carries one request object per POST: a batch is refused whole, before
  // any of its members is read (mcpBatchRules says the same of the MCP endpoints' revisions).
  if (Array.isArray(body))
    return {
      ok: false,
      refusal: rpcError(
        null,
        RPC.invalidRequest,
        'invalid_json_rpc',
        'Invalid JSON-RPC request: A2A takes one request object per POST, not a batch (an array); send each request on its own.',
        requestId,
      ),
    };
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    return {
      ok: false,
      refusal: rpcError(rpcIdOf(body), RPC.invalidRequest, 'invalid_json_rpc', `Invalid JSON-RPC request: ${firstIssue(parsed.error, '(request)')}`, requestId),
    };
  if (versionHeader !== undefined && !SPOKEN_VERSIONS.has(versionHeader))
    return {
      ok: false,
      refusal: rpcError(
        rpcIdOf(body),
        RPC.versionNotSupported,
        'a2a_version_not_supported',
        `A2A version ${versionHeader} is not supported; this agent speaks 1.0 and 0.3.`,
        requestId,
      ),
    };
  return { ok: true, envelope: parsed.data };
}
