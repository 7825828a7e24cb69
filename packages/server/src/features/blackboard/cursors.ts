import { ServiceError } from '../../service-error.ts';

export interface CursorInput {
  since?: string;
  since_id?: string;
  before?: string;
  before_id?: string;
  limit: number;
}

/** initial: newest first; history: older than `before`, newest first; poll: newer than `since`, oldest first. */
export type ReadMode = 'initial' | 'history' | 'poll';

/** Checks how the cursor fields combine; each broken rule has its own code. */
export function readModeOf(input: CursorInput): ReadMode {
  if (input.since !== undefined && input.before !== undefined) {
    throw new ServiceError('blackboard_cursor_conflict:since_before', 'since reads newer items and before reads older history; send one of them.');
  }
  if (input.since_id !== undefined && input.since === undefined)
    throw new ServiceError('blackboard_cursor_conflict:since_id_without_since', 'since_id needs since (the created_at of that item).');
  if (input.before_id !== undefined && input.before === undefined)
    throw new ServiceError('blackboard_cursor_conflict:before_id_without_before', 'before_id needs before (the created_at of that item).');
  return input.since !== undefined ? 'poll' : input.before !== undefined ? 'history' : 'initial';
}

/** Where a page sits among the rows: the SQL condition on (created_at, id) and the order. */
export function cursorCondition(
  input: CursorInput,
  mode: ReadMode,
  bind: (value: unknown) => string,
  columns = { at: 'created_at', id: 'id' },
): { where: string | undefined; order: string } {
  const tuple = `(${columns.at}, ${columns.id})`;
  if (mode === 'poll') {
    const at = `${bind(input.since)}::timestamptz`;
    return { where: input.since_id ? `${tuple} > (${at}, ${bind(input.since_id)})` : `${columns.at} > ${at}`, order: `${columns.at} ASC, ${columns.id} ASC` };
  }
  const order = `${columns.at} DESC, ${columns.id} DESC`;
  if (mode === 'history') {
    const at = `${bind(input.before)}::timestamptz`;
    return { where: input.before_id ? `${tuple} < (${at}, ${bind(input.before_id)})` : `${columns.at} < ${at}`, order };
  }
  return { where: undefined, order };
}

export interface Tuple {
  at: string;
  id: string;
}

export interface PageCursors {
  has_more: boolean;
  history_next: { before: string; before_id: string } | null;
  poll_next: { since: string; since_id: string | null } | null;
}

/**
 * The cursors of a page of `delivered` tuples (in delivery order). An empty initial page anchors
 * polling a few seconds in the past: nothing matched then, so nothing is repeated, and a put that
 * was committing while we read is still caught.
 */
export function pageCursors(input: CursorInput, mode: ReadMode, delivered: Tuple[], hasMore: boolean, now: Date): PageCursors {
  const first = delivered[0];
  const last = delivered[delivered.length - 1];
  if (mode === 'poll') {
    return {
      has_more: hasMore,
      history_next: null,
      poll_next: last ? { since: last.at, since_id: last.id } : { since: input.since!, since_id: input.since_id ?? null },
    };
  }
  const history_next = hasMore && last ? { before: last.at, before_id: last.id } : null;
  if (mode === 'history') return { has_more: hasMore, history_next, poll_next: null };
  return {
    has_more: hasMore,
    history_next,
    poll_next: first ? { since: first.at, since_id: first.id } : { since: new Date(now.getTime() - 5_000).toISOString(), since_id: null },
  };
}
