import { z } from 'zod';
import { normaliseTask } from './channel-key.ts';
import { blackboardLimits as limits } from './limits.ts';

export const ITEM_ID_PATTERN = /^bb_[0-9a-f]{24}$/;
export const CHANNEL_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$/;
export const TOPIC_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const REVISION_PATTERN = /^(?:[0-9a-fA-F]{40}|(?:sha256:)?[0-9a-fA-F]{64})$/;

export const BlackboardItemId = z.string().regex(ITEM_ID_PATTERN, 'must match ^bb_[0-9a-f]{24}$').meta({ id: 'BlackboardItemId' });
export const ChannelKey = z
  .string()
  .max(limits.keyMaxChars)
  .regex(CHANNEL_KEY_PATTERN, 'must match ^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$')
  .meta({ id: 'BlackboardChannelKey' });
export const BlackboardKind = z.enum(['ask', 'result', 'note', 'message']).meta({ id: 'BlackboardKind' });
export const TopicSlug = z.string().min(1).max(limits.topicMaxChars).regex(TOPIC_PATTERN, 'must be a lower-case slug (a-z, 0-9, single hyphens)');
export const Topics = z
  .array(TopicSlug)
  .max(limits.topicsMax)
  .refine((topics) => new Set(topics).size === topics.length, 'topics must be unique');
export const Task = z
  .string()
  .max(limits.taskMaxChars)
  .refine(
    (task) => normaliseTask(task) !== undefined,
    'must be a canonical task (toxicity, sentiment, prompt_injection, tickets, rerank, embeddings, nli, other) or a known alias',
  );
export const ExpiresIn = z.number().int().min(limits.ttlMinSeconds).max(limits.ttlMaxSeconds);
export const IdempotencyKey = z.string().min(1).max(limits.idempotencyKeyMaxChars);
export const BlackboardRevision = z.string().regex(REVISION_PATTERN, 'must be 40 hex characters, or 64 hex characters with an optional sha256: prefix');
export const WeightSha256 = z.string().regex(/^(?:sha256:)?[0-9a-fA-F]{64}$/, 'must be 64 hex characters with an optional sha256: prefix');
export const BlackboardArtifactId = z.string().min(1).max(limits.artifactIdMaxChars);

export const RuntimeVersion = z.object({ name: z.string().min(1).max(64), version: z.string().min(1).max(80) });
export const SolutionScope = z
  .strictObject({
    artifact_id: BlackboardArtifactId,
    revision: BlackboardRevision.optional(),
    runtime_versions: z.array(RuntimeVersion).min(1).max(limits.runtimeVersionsMax).optional(),
  })
  .meta({ id: 'BlackboardSolutionScope' });
export type SolutionScope = z.infer<typeof SolutionScope>;

/**
 * The value of a put (spec 2.1). Unknown fields are kept verbatim; the 65536-byte cap on the
 * whole value is checked by the server on the normalised value, since aliases may add fields.
 */
export const BlackboardValue = z
  .looseObject({
    text: z.string().max(limits.textMaxChars),
    task: Task.optional(),
    kind: BlackboardKind.optional(),
    topics: Topics.optional(),
    artifact_id: z.string().max(limits.artifactIdMaxChars).optional(),
    weight_sha256: WeightSha256.optional(),
    receipt: z.record(z.string(), z.unknown()).optional(),
    next_call: z.record(z.string(), z.unknown()).optional(),
    parent_id: BlackboardItemId.optional(),
    expires_in: ExpiresIn.optional(),
    idempotency_key: IdempotencyKey.optional(),
  })
  .meta({ id: 'BlackboardValue' });
export type BlackboardValue = z.infer<typeof BlackboardValue>;

export const KeyFrom = z
  .strictObject({
    input: z.string().min(1).max(limits.keyFromInputMaxChars),
    task: Task.optional(),
  })
  .meta({ id: 'BlackboardKeyFrom' });

/**
 * A cursor time (`since`, `before`): ISO 8601 that PostgreSQL can read, so an exotic value is a
 * 422 rather than a database error: an offset of at most ±15:59, and a year from 0001 (ISO's
 * year 0000 has no counterpart in PostgreSQL, which counts 1 BC before AD 1). Kept as text so the
 * microseconds of a cursor the server handed out survive.
 */
export const CursorTimestamp = z.iso
  .datetime({ offset: true })
  .refine((value) => !value.startsWith('0000-'), 'the year must be 0001 or later')
  .refine((value) => {
    const offset = /([+-])(\d{2}):?(\d{2})$/.exec(value);
    return !offset || Number(offset[2]) * 60 + Number(offset[3]) <= 15 * 60 + 59;
  }, 'the UTC offset must be within -15:59..+15:59');
