import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { blackboardLimits, deriveChannelKey, normaliseTask, REVISION_PATTERN, type BlackboardPutRequest } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';

export interface ApplicabilityScope {
  artifactId: string | null;
  revision: string | null;
  runtimeVersions: Array<{ name: string; version: string }> | null;
}

export interface NormalisedPut {
  key: string;
  /** The value as stored (aliases folded in, task canonical, control fields removed), without the screen. */
  value: Record<string, unknown>;
  /** UTF-8 bytes of the normalised value's JSON: what admission counts and the 64 KiB cap measures. */
  valueBytes: number;
  ttlSeconds: number;
  idempotencyKey: string | null;
  task: string | null;
  kind: string | null;
  topics: string[];
  parentId: string | null;
  scope: ApplicabilityScope;
  /** Fingerprint of what would be stored, to tell a replay from a different put under the same idempotency key. */
  requestHash: string;
}

const conflict = (field: string, detail: string) =>
  new ServiceError(`blackboard_field_conflict:${field}`, `The top-level ${field} and value.${field} differ (${detail}); send one, or the same in both.`);

/** JSON with sorted object keys, so equal values hash equally whatever order their fields came in. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export function normaliseRevision(revision: string): string {
  return revision.toLowerCase().replace(/^sha256:/, '');
}

/** Artifact applicability of an item: `value.solution_scope` when it is an object, else top-level artifact_id, revision, runtime_versions. */
function applicabilityOf(value: Record<string, unknown>): ApplicabilityScope {
  const source =
    value.solution_scope && typeof value.solution_scope === 'object' && !Array.isArray(value.solution_scope)
      ? (value.solution_scope as Record<string, unknown>)
      : value;
  const artifactId = typeof source.artifact_id === 'string' && source.artifact_id.length > 0 && source.artifact_id.length <= 200 ? source.artifact_id : null;
  const revision = typeof source.revision === 'string' && REVISION_PATTERN.test(source.revision) ? normaliseRevision(source.revision) : null;
  const versions = Array.isArray(source.runtime_versions)
    ? source.runtime_versions
        .filter((entry): entry is { name: string; version: string } => typeof entry?.name === 'string' && typeof entry?.version === 'string')
        .map(({ name, version }) => ({ name, version }))
    : [];
  return { artifactId, revision, runtimeVersions: versions.length > 0 ? versions : null };
}

/**
 * Folds a put's aliases into its value and derives its key. Every disagreement is refused with
 * `blackboard_field_conflict:<field>`; nothing is dropped or defaulted silently.
 */
export function normalisePut(request: BlackboardPutRequest): NormalisedPut {
  if (request.key !== undefined && request.key_from !== undefined) throw new ServiceError('blackboard_field_conflict:key', 'Send key or key_from, not both.');
  if (request.key === undefined && request.key_from === undefined)
    throw new ServiceError('blackboard_key_required', 'A put needs key (a channel key) or key_from ({ input, task }) to derive one.');
  const value: Record<string, unknown> = { ...request.value };
  // The screening annotation is the board's own; a caller cannot supply one.
  delete value.coprocessor;

  for (const field of ['kind', 'parent_id', 'topics', 'expires_in', 'idempotency_key'] as const) {
    const alias = request[field];
    if (alias === undefined) continue;
    if (value[field] !== undefined && !isDeepStrictEqual(value[field], alias))
      throw conflict(field, `${JSON.stringify(alias)} vs ${JSON.stringify(value[field])}`);
    value[field] = alias;
  }

  const nestedTask = typeof value.task === 'string' ? value.task : undefined;
  if (request.task !== undefined && nestedTask !== undefined && normaliseTask(request.task) !== normaliseTask(nestedTask)) {
    throw conflict('task', `${request.task} vs ${nestedTask}`);
  }
  let task = normaliseTask(nestedTask ?? request.task ?? '') ?? null;
  const fromTask = request.key_from?.task;
  if (fromTask !== undefined) {
    const fromCanonical = normaliseTask(fromTask)!;
    if (task !== null && task !== fromCanonical)
      throw new ServiceError('blackboard_field_conflict:task', `key_from.task (${fromTask}) names another task than the value (${task}).`);
    task = fromCanonical;
  }
  if (task !== null) value.task = task;

  // The raw task token prefixes a derived key; aliases are not rewritten there.
  const key = request.key ?? deriveChannelKey(request.key_from!.input, fromTask ?? request.task ?? nestedTask ?? 'other');
  const ttlSeconds = (value.expires_in as number | undefined) ?? blackboardLimits.ttlDefaultSeconds;
  const idempotencyKey = (value.idempotency_key as string | undefined) ?? null;
  // Control fields shape the row (expires_at, the idempotency identity); they are not content.
  delete value.expires_in;
  delete value.idempotency_key;

  // NUL and lone surrogates, which would fail the whole batch's insert, never get here: the edge
  // refuses them in every JSON body, REST and MCP alike (http/json-text-guard.ts).
  const json = JSON.stringify(value);
  const valueBytes = Buffer.byteLength(json, 'utf8');
  if (valueBytes > blackboardLimits.valueMaxBytes) {
    throw new ServiceError('blackboard_value_too_large', `The value is ${valueBytes} bytes of JSON; the most is ${blackboardLimits.valueMaxBytes}.`);
  }
  return {
    key,
    value,
    valueBytes,
    ttlSeconds,
    idempotencyKey,
    task,
    kind: (value.kind as string | undefined) ?? null,
    topics: (value.topics as string[] | undefined) ?? [],
    parentId: (value.parent_id as string | undefined) ?? null,
    scope: applicabilityOf(value),
    requestHash: createHash('sha256').update(stableJson({ key, value, ttlSeconds })).digest('hex'),
  };
}
