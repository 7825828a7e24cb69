import { QueryTypes, type Sequelize } from 'sequelize';
import { decodeCursor, encodeCursor } from '../http/opaque-cursor.ts';

/**
 * One sort key of a keyset list. The keys together are unique (the last is usually the id), so
 * the position after a row names exactly the rows that follow it.
 */
export interface KeysetKey {
  /** A column (or SQL expression) of the listed rows. */
  readonly column: string;
  readonly order: 'ASC' | 'DESC';
  /**
   * How the key travels in the cursor: a `timestamptz` as ISO text to the microsecond (a
   * JavaScript Date would cut it to the millisecond, and the rows of that millisecond after the
   * page's last one would be skipped), a `date` as YYYY-MM-DD, a `bigint` as decimal text.
   */
  readonly type: 'timestamptz' | 'date' | 'bigint' | 'text';
}

/** A list read a page at a time, newest or oldest first, by its keys. */
export interface KeysetList {
  /** The columns of a row, as SELECT lists them. */
  readonly select: string;
  /** The table (or join) the rows come from. */
  readonly from: string;
  /** Conditions every row of the list meets (the caller's rows, a filter); falsy entries are left out. */
  readonly where?: readonly (string | false | undefined)[];
  /** Named values of `select`, `from` and `where` (`:name`). */
  readonly replacements?: Readonly<Record<string, unknown>>;
  readonly keys: readonly KeysetKey[];
  /**
   * A cursor this list gave out before it was read here, as its key values (cursors are held by
   * callers across an upgrade); undefined when the value is not one.
   */
  readonly earlierCursor?: (value: unknown) => readonly string[] | undefined;
}

/** The usual order of a list: newest first by `created_at`, the id breaking ties. */
export const NEWEST_FIRST: readonly KeysetKey[] = [
  { column: 'created_at', order: 'DESC', type: 'timestamptz' },
  { column: 'id', order: 'DESC', type: 'text' },
];

export interface KeysetPage<Row> {
  readonly rows: Row[];
  readonly hasMore: boolean;
  /** The position after the page's last row, or null on the last page. */
  readonly nextCursor: string | null;
}

/** The page part of a `cursorList` answer, as `listAnswer` builds it. */
export interface ListAnswer<Item> {
  data: Item[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * A page as a `cursorList` of the contract answers it: its items (the page's rows, presented) and
 * where the next page starts. `{ object: 'list', ...listAnswer(page, items) }` where the list
 * always said `object`.
 */
export function listAnswer<Item>(page: KeysetPage<unknown>, data: Item[]): ListAnswer<Item> {
  return { data, has_more: page.hasMore, next_cursor: page.nextCursor };
}

const keyText: Record<KeysetKey['type'], (column: string) => string> = {
  timestamptz: (column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
  date: (column) => `to_char(${column}, 'YYYY-MM-DD')`,
  bigint: (column) => `(${column})::text`,
  text: (column) => `(${column})::text`,
};

const keyValid: Record<KeysetKey['type'], (value: string) => boolean> = {
  timestamptz: (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/.test(value) && !Number.isNaN(Date.parse(value)),
  date: (value) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value)),
  bigint: (value) => /^\d{1,19}$/.test(value),
  text: () => true,
};

/** Names of the key columns and values the page adds to the list's own (`keyset_0`, `:keyset_take`). */
const KEY_FIELD = 'keyset_';

/** The cursor's key values when it is one of this list's (an array of the keys' texts, or an earlier form). */
function positionOf(list: KeysetList, cursor: string | undefined): readonly string[] | undefined {
  const matches = (value: unknown): value is readonly string[] =>
    Array.isArray(value) &&
    value.length === list.keys.length &&
    value.every((part, index) => typeof part === 'string' && keyValid[list.keys[index]!.type](part));
  const toPosition = (value: unknown) => (matches(value) ? value : list.earlierCursor?.(value));
  const decoded = decodeCursor(cursor, (value): value is unknown => {
    const position = toPosition(value);
    return position !== undefined && matches(position);
  });
  return decoded === undefined ? undefined : toPosition(decoded);
}

/**
 * The rows after a position in the keys' order. With one direction it is a row comparison, which
 * PostgreSQL answers from an index on the keys; with mixed directions, the same as ORs.
 */
function afterCondition(keys: readonly KeysetKey[]): string {
  const value = (index: number) => `:${KEY_FIELD}${index}::${keys[index]!.type}`;
  if (keys.every((key) => key.order === keys[0]!.order)) {
    const op = keys[0]!.order === 'DESC' ? '<' : '>';
    return `(${keys.map((key) => key.column).join(', ')}) ${op} (${keys.map((_, index) => value(index)).join(', ')})`;
  }
  const branches = keys.map((key, index) => {
    const equal = keys.slice(0, index).map((earlier, at) => `${earlier.column} = ${value(at)}`);
    return `(${[...equal, `${key.column} ${key.order === 'DESC' ? '<' : '>'} ${value(index)}`].join(' AND ')})`;
  });
  return `(${branches.join(' OR ')})`;
}

/**
 * One page of a keyset list: at most `limit` rows after the cursor's position, read as `limit + 1`
 * rows so `hasMore` needs no count. A cursor the list did not give out is 422 on `query.cursor`.
 */
export async function keysetPage<Row extends object>(
  sequelize: Sequelize,
  list: KeysetList,
  page: { readonly limit: number; readonly cursor?: string | undefined },
): Promise<KeysetPage<Row>> {
  const after = positionOf(list, page.cursor);
  const conditions = [...(list.where ?? []), after ? afterCondition(list.keys) : undefined].filter(Boolean);
  const keyColumns = list.keys.map((key, index) => `${keyText[key.type](key.column)} AS ${KEY_FIELD}${index}`).join(', ');
  const replacements: Record<string, unknown> = { ...list.replacements, [`${KEY_FIELD}take`]: page.limit + 1 };
  after?.forEach((part, index) => {
    replacements[`${KEY_FIELD}${index}`] = part;
  });
  const rows = await sequelize.query<Row & Record<string, unknown>>(
    `SELECT ${list.select}, ${keyColumns} FROM ${list.from} ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
     ORDER BY ${list.keys.map((key) => `${key.column} ${key.order}`).join(', ')} LIMIT :${KEY_FIELD}take`,
    { replacements, type: QueryTypes.SELECT },
  );
  const hasMore = rows.length > page.limit;
  const kept = rows.slice(0, page.limit);
  const last = kept.at(-1);
  const nextCursor = hasMore && last ? encodeCursor(list.keys.map((_, index) => String(last[`${KEY_FIELD}${index}`]))) : null;
  for (const row of kept) for (let index = 0; index < list.keys.length; index += 1) delete row[`${KEY_FIELD}${index}`];
  return { rows: kept, hasMore, nextCursor };
}
