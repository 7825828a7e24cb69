import { z } from 'zod';
import {
  BlackboardArtifactId,
  BlackboardItemId,
  CursorTimestamp,
  BlackboardKind,
  ChannelKey,
  ExpiresIn,
  IdempotencyKey,
  KeyFrom,
  BlackboardRevision,
  SolutionScope,
  Task,
  TopicSlug,
  Topics,
} from './fields.ts';
import { blackboardLimits as limits } from './limits.ts';
import { bytes, empty } from '../route.ts';

/** The one MCP tool's name; `op` selects the operation (these are values, not separate tools). */
export const BLACKBOARD_MCP_TOOL = 'blackboard';

/**
 * Arguments of the `blackboard` MCP tool (spec 4.2). Additional properties are rejected. Which
 * arguments an op takes is checked by the server with the REST request schemas, so both surfaces
 * answer the same input the same way.
 */
export const BlackboardToolArguments = z.strictObject({
  op: z.enum(['put', 'get', 'query', 'channels', 'tombstone']),
  key: ChannelKey.optional(),
  key_from: KeyFrom.optional(),
  value: z.looseObject({ text: z.string().max(limits.textMaxChars) }).optional(),
  id: BlackboardItemId.optional(),
  edit_token: z.string().min(1).max(limits.editTokenMaxChars).optional(),
  idempotency_key: IdempotencyKey.optional(),
  input: z.string().min(1).max(limits.keyFromInputMaxChars).optional().describe('Shorthand for key_from.input, paired with task'),
  task: Task.optional(),
  kind: BlackboardKind.optional(),
  topics: Topics.optional(),
  topic: TopicSlug.optional(),
  q: z.string().min(1).max(limits.qMaxChars).optional(),
  artifact_id: BlackboardArtifactId.optional(),
  revision: BlackboardRevision.optional(),
  solution_scope: SolutionScope.optional(),
  parent_id: BlackboardItemId.optional(),
  thread_id: BlackboardItemId.optional(),
  limit: z.number().int().min(1).max(limits.readLimitMax).optional(),
  expires_in: ExpiresIn.optional(),
  since: CursorTimestamp.optional(),
  since_id: BlackboardItemId.optional(),
  before: CursorTimestamp.optional(),
  before_id: BlackboardItemId.optional(),
});
export type BlackboardToolArguments = z.infer<typeof BlackboardToolArguments>;

export const blackboardToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } as const;

/** JSON-RPC 2.0 message(s) posted to the MCP endpoint; the MCP SDK validates them in detail. */
export const McpJsonRpcBody = z
  .union([z.looseObject({ jsonrpc: z.literal('2.0') }), z.array(z.looseObject({ jsonrpc: z.literal('2.0') })).min(1)])
  .meta({ id: 'McpJsonRpcBody', description: 'A JSON-RPC 2.0 message or batch of the Model Context Protocol (Streamable HTTP, stateless)' });

/**
 * What an MCP endpoint answers (/api/mcp, /mcp): JSON-RPC as JSON or as an event stream (the
 * Content-Type says which), 202 for a notification, and the statuses the revisions name for
 * protocol errors, each with a JSON-RPC body.
 */
export const mcpEndpointResponses = {
  200: bytes('application/json'),
  202: empty(),
  400: bytes('application/json'),
  404: bytes('application/json'),
  405: bytes('application/json'),
  406: bytes('application/json'),
  413: bytes('application/json'),
  415: bytes('application/json'),
  500: bytes('application/json'),
};
