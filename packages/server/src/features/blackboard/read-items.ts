import type { Sequelize } from 'sequelize';
import {
  blackboardContract,
  blackboardLimits,
  normaliseTask,
  pathFor,
  type BlackboardChannelsRequest,
  type BlackboardQueryRequest,
  type BlackboardReadPage,
  type BlackboardRecord,
  type PostingState,
} from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import { cursorCondition, pageCursors, readModeOf, type CursorInput } from './cursors.ts';
import { prepared, queryPositional, queryPrepared } from '../../db/prepared.ts';
import { LIVE, LIVE_ITEM_COLUMNS, liveRecordOf, type LiveItemRow } from './item-row.ts';
import { normaliseRevision } from './normalise-put.ts';
import { likePattern } from '../../db/like-pattern.ts';
import { SqlParams } from './sql.ts';

const PATHS = {
  get: pathFor(blackboardContract.getPost),
  query: pathFor(blackboardContract.queryPost),
  channels: pathFor(blackboardContract.channelsPost),
} as const;
export type ReadOp = keyof typeof PATHS;

/** A read's filters with cursors removed and values normalised, as `next_call` repeats them. */
export type ReadFilters = Omit<BlackboardQueryRequest, keyof CursorInput>;

export function normaliseFilters(filters: ReadFilters): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) out[name] = value;
  if (filters.task !== undefined) out.task = normaliseTask(filters.task);
  if (filters.revision !== undefined) out.revision = normaliseRevision(filters.revision);
  return out;
}

/** SQL conditions of the shared filters (key, task, kind, topic, q) on rows aliased as `alias`. */
export function channelFilterConditions(
  filters: Pick<BlackboardChannelsRequest, 'key' | 'task' | 'kind' | 'topic' | 'q'>,
  params: SqlParams,
  alias = '',
): string[] {
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  const conditions: string[] = [];
  if (filters.key !== undefined) conditions.push(`${column('key')} = ${params.add(filters.key)}`);
  if (filters.task !== undefined) conditions.push(`${column('task')} = ${params.add(normaliseTask(filters.task))}`);
  if (filters.kind !== undefined) conditions.push(`${column('kind')} = ${params.add(filters.kind)}`);
  if (filters.topic !== undefined) conditions.push(`${params.add(filters.topic)} = ANY(${column('topics')})`);
  if (filters.q !== undefined) conditions.push(`${column('text')} ILIKE ${params.add(likePattern(filters.q))} ESCAPE '\\'`);
  return conditions;
}

/** Suggestions for the next read: the same filters with the relevant cursor. Never a put. */
export function nextCalls(
  op: ReadOp,
  filters: Record<string, unknown>,
  limit: number,
  cursors: { history_next: object | null; poll_next: { since: string; since_id: string | null } | null },
) {
  const call = (cursor: Record<string, unknown>) => ({ op, method: 'POST' as const, path: PATHS[op], arguments: { ...filters, limit, ...cursor } });
  const poll = cursors.poll_next ? { since: cursors.poll_next.since, ...(cursors.poll_next.since_id ? { since_id: cursors.poll_next.since_id } : {}) } : null;
  return { history: cursors.history_next ? call({ ...cursors.history_next }) : null, poll: poll ? call(poll) : null };
}

/** How many distinct read statements run as named prepared statements; see selectReadRows. */
const NAMED_READ_SHAPES = 64;
const namedReadShapes = new Set<string>();

/**
 * Runs a read. The shapes reads take in practice (a key, a cursor, a filter or two) run as
 * named prepared statements, parsed once per connection and planned until PostgreSQL settles on
 * a generic plan: planning a get took 0.15-0.2 ms, as long as running it (load 9). Filters
 * combine into thousands of possible texts, though, and each named statement keeps its plan on
 * every pooled connection, so past the first NAMED_READ_SHAPES texts a new shape runs unnamed
 * (parsed each time), and no caller can grow that memory.
 */
async function selectReadRows<T extends object>(sequelize: Sequelize, sql: string, values: unknown[]): Promise<T[]> {
  if (!namedReadShapes.has(sql) && namedReadShapes.size >= NAMED_READ_SHAPES) return queryPositional<T>(sequelize, sql, values);
  namedReadShapes.add(sql);
  return queryPrepared<T>(sequelize, prepared(sql), values);
}

const runtimeMatches = (wanted: Array<{ name: string; version: string }>, have: Array<{ name: string; version: string }> | null) =>
  wanted.every((entry) => have?.some((candidate) => candidate.name === entry.name && candidate.version === entry.version) ?? false);

/**
 * One page of live items, for `get` (one channel) and `query` (across channels). Rows are
 * fetched limit + 1 to learn has_more without counting.
 */
export async function readItems(
  sequelize: Sequelize,
  op: 'get' | 'query',
  request: BlackboardQueryRequest,
  posting: PostingState,
): Promise<BlackboardReadPage> {
  const mode = readModeOf(request);
  if (request.parent_id !== undefined && request.thread_id !== undefined) {
    throw new ServiceError(
      'blackboard_filter_conflict:parent_id_thread_id',
      'parent_id (direct replies) and thread_id (a whole thread) exclude each other; send one.',
    );
  }
  if (request.revision !== undefined && request.artifact_id === undefined && request.solution_scope === undefined) {
    throw new ServiceError('blackboard_filter_conflict:revision_requires_artifact', 'revision needs artifact_id or solution_scope.');
  }
  const params = new SqlParams();
  const conditions = [LIVE, ...channelFilterConditions(request, params)];
  if (request.artifact_id !== undefined) conditions.push(`artifact_id = ${params.add(request.artifact_id)}`);
  if (request.revision !== undefined) conditions.push(`revision = ${params.add(normaliseRevision(request.revision))}`);
  const scope = request.solution_scope;
  if (scope) {
    conditions.push(`artifact_id = ${params.add(scope.artifact_id)}`);
    if (scope.revision !== undefined) conditions.push(`revision = ${params.add(normaliseRevision(scope.revision))}`);
  }
  if (request.parent_id !== undefined) conditions.push(`parent_id = ${params.add(request.parent_id)}`);
  let thread = '';
  if (request.thread_id !== undefined) {
    // Root plus descendants, at most 32 levels down; the path guard stops a cycle from looping.
    thread = `WITH RECURSIVE thread(id, depth, path) AS (
        SELECT id, 0, ARRAY[id] FROM blackboard_items WHERE id = ${params.add(request.thread_id)}
        UNION ALL
        SELECT child.id, thread.depth + 1, thread.path || child.id
        FROM blackboard_items child JOIN thread ON child.parent_id = thread.id
        WHERE thread.depth < ${blackboardLimits.threadDepth} AND NOT child.id = ANY(thread.path)
      ) `;
    conditions.push('id IN (SELECT id FROM thread)');
  }
  const cursor = cursorCondition(request, mode, (value) => params.add(value));
  if (cursor.where) conditions.push(cursor.where);
  const limit = request.limit;
  // Runtime versions are only read to mark a solution scope's items eligible.
  const columns = scope?.runtime_versions ? `${LIVE_ITEM_COLUMNS}, runtime_versions` : LIVE_ITEM_COLUMNS;
  const rows = await selectReadRows<LiveItemRow & { runtime_versions?: Array<{ name: string; version: string }> | null }>(
    sequelize,
    `${thread}SELECT ${columns} FROM blackboard_items WHERE ${conditions.join(' AND ')} ORDER BY ${cursor.order} LIMIT ${params.add(limit + 1)}`,
    params.values,
  );
  const page = rows.length > limit ? rows.slice(0, limit) : rows;
  const items: BlackboardRecord[] = page.map((row) => {
    const record = liveRecordOf(row);
    if (!scope) return record;
    return { ...record, eligible: scope.runtime_versions ? runtimeMatches(scope.runtime_versions, row.runtime_versions ?? null) : true };
  });
  // An empty page of the first read anchors polling on this server's clock (a page with rows anchors on its newest row).
  const now = new Date();
  const cursors = pageCursors(
    request,
    mode,
    items.map((item) => ({ at: item.created_at, id: item.id })),
    rows.length > limit,
    now,
  );
  const { since: _s, since_id: _si, before: _b, before_id: _bi, limit: _l, ...filters } = request;
  return { items, ...cursors, next_call: nextCalls(op, normaliseFilters(filters), limit, cursors), posting };
}

const showStatement = prepared(`SELECT ${LIVE_ITEM_COLUMNS} FROM blackboard_items WHERE id = $1 AND ${LIVE}`);

/** One live item, or 404: tombstoned and expired items are never read. */
export async function showItem(sequelize: Sequelize, id: string): Promise<BlackboardRecord> {
  const [row] = await queryPrepared<LiveItemRow>(sequelize, showStatement, [id]);
  if (!row) throw new ServiceError('blackboard_item_not_found', `No live item ${id}: it never existed, expired, or was tombstoned.`);
  return liveRecordOf(row);
}
