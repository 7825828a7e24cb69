import { z } from 'zod';
import { pageLimit } from '../query.ts';
import {
  BlackboardArtifactId,
  BlackboardItemId,
  CursorTimestamp,
  BlackboardKind,
  BlackboardValue,
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

const timestamp = CursorTimestamp;
const readLimit = pageLimit(limits.readLimitMax, limits.readLimitDefault);

/** Cursor fields shared by every read. Their combinations are checked by the server (400 with a named code). */
const cursorShape = {
  since: timestamp.optional(),
  since_id: BlackboardItemId.optional(),
  before: timestamp.optional(),
  before_id: BlackboardItemId.optional(),
  limit: readLimit,
};

const filterShape = {
  key: ChannelKey.optional(),
  task: Task.optional(),
  kind: BlackboardKind.optional(),
  topic: TopicSlug.optional(),
  q: z.string().min(1).max(limits.qMaxChars).optional(),
};

/** `solution_scope` is an object in a body and JSON-encoded text in a query string; both are accepted. */
const solutionScopeParam = z.union([
  SolutionScope,
  z
    .string()
    .transform((text, context) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        context.addIssue({ code: 'custom', message: 'solution_scope must be a JSON-encoded object' });
        return z.NEVER;
      }
    })
    .pipe(SolutionScope),
]);

export const BlackboardGetRequest = z.strictObject({ key: ChannelKey, ...cursorShape }).meta({ id: 'BlackboardGetRequest' });
export type BlackboardGetRequest = z.output<typeof BlackboardGetRequest>;

export const BlackboardQueryRequest = z
  .strictObject({
    ...filterShape,
    ...cursorShape,
    artifact_id: BlackboardArtifactId.optional(),
    revision: BlackboardRevision.optional(),
    solution_scope: solutionScopeParam.optional(),
    parent_id: BlackboardItemId.optional(),
    thread_id: BlackboardItemId.optional(),
  })
  .meta({ id: 'BlackboardQueryRequest' });
export type BlackboardQueryRequest = z.output<typeof BlackboardQueryRequest>;

export const BlackboardChannelsRequest = z.strictObject({ ...filterShape, ...cursorShape }).meta({ id: 'BlackboardChannelsRequest' });
export type BlackboardChannelsRequest = z.output<typeof BlackboardChannelsRequest>;

/**
 * A put: `key` or `key_from`, the value, and top-level aliases of value fields. An alias that
 * disagrees with the value is refused (`blackboard_field_conflict:<field>`), never resolved silently.
 */
export const BlackboardPutRequest = z
  .strictObject({
    key: ChannelKey.optional(),
    key_from: KeyFrom.optional(),
    value: BlackboardValue,
    expires_in: ExpiresIn.optional(),
    idempotency_key: IdempotencyKey.optional(),
    kind: BlackboardKind.optional(),
    parent_id: BlackboardItemId.optional(),
    task: Task.optional(),
    topics: Topics.optional(),
  })
  .meta({ id: 'BlackboardPutRequest' });
export type BlackboardPutRequest = z.output<typeof BlackboardPutRequest>;

export const BlackboardTombstoneRequest = z
  .strictObject({ id: BlackboardItemId, edit_token: z.string().min(1).max(limits.editTokenMaxChars) })
  .meta({ id: 'BlackboardTombstoneRequest' });

export const BlackboardPostingRequest = z
  .strictObject({ enabled: z.boolean(), reason: z.string().max(500).nullable().optional() })
  .meta({ id: 'BlackboardPostingRequest' });

export const BlackboardItemParams = z.object({ id: BlackboardItemId });
