import type pg from 'pg';

/** One table as the copy sees it: the columns it writes and, for a self-referencing table, its links to itself. */
export interface TablePlan {
  name: string;
  /** Columns a row is written with: every column but generated ones, in the table's order. */
  columns: string[];
  /** Foreign keys from the table to itself, as [referencing column, referenced column] pairs. */
  selfLinks: Array<Array<[string, string]>>;
}

export interface SchemaPlan {
  /** Tables in dependency order, in groups: a group's tables refer only to tables of earlier groups (and to themselves). */
  groups: TablePlan[][];
  sequences: string[];
}

export const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The tables and sequences of svc's schema, read from the catalog rather than from a list, so a
 * table a new migration adds is copied without anyone remembering it. The order comes from the
 * foreign keys: a table is written after every table it refers to.
 */
export async function readSchemaPlan(client: pg.Client): Promise<SchemaPlan> {
  const { rows: tables } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
  );
  const { rows: columns } = await client.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND is_generated = 'NEVER' ORDER BY table_name, ordinal_position`,
  );
  const { rows: keys } = await client.query<{ child: string; parent: string; child_columns: string[]; parent_columns: string[] }>(
    `SELECT k.conrelid::regclass::text AS child, k.confrelid::regclass::text AS parent,
            ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY u(n, i) JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i) AS child_columns,
            ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY u(n, i) JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i) AS parent_columns
       FROM pg_constraint k WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace`,
  );
  const { rows: sequences } = await client.query<{ name: string }>(
    `SELECT sequencename AS name FROM pg_sequences WHERE schemaname = current_schema() ORDER BY 1`,
  );
  const plans = new Map<string, TablePlan>(tables.map(({ name }) => [name, { name, columns: [], selfLinks: [] }]));
  for (const column of columns) plans.get(column.table_name)?.columns.push(column.column_name);
  const parents = new Map<string, Set<string>>(tables.map(({ name }) => [name, new Set()]));
  for (const key of keys) {
    // regclass::text quotes a name only when it must; svc's names never need it.
    const child = plans.get(key.child);
    if (!child) continue;
    if (key.child === key.parent) child.selfLinks.push(key.child_columns.map((column, index) => [column, key.parent_columns[index]!]));
    else parents.get(key.child)?.add(key.parent);
  }
  // Kahn's layers: each group is the tables whose parents are all in earlier groups.
  const groups: TablePlan[][] = [];
  const placed = new Set<string>();
  while (placed.size < plans.size) {
    const ready = [...plans.keys()].filter((name) => !placed.has(name) && [...parents.get(name)!].every((parent) => placed.has(parent)));
    if (ready.length === 0) {
      const left = [...plans.keys()].filter((name) => !placed.has(name));
      throw new Error(`The foreign keys of ${left.join(', ')} form a cycle: no order writes them one table after another`);
    }
    for (const name of ready) placed.add(name);
    groups.push(ready.map((name) => plans.get(name)!));
  }
  return { groups, sequences: sequences.map(({ name }) => name) };
}

/**
 * The rows of `table` as JSON text, parents before children for a table that refers to itself
 * (a walk from the rows that refer to nothing). A row in a loop of references is never reached:
 * the row count check then fails the copy rather than letting it pass short.
 */
export function rowsQuery(table: TablePlan): string {
  const name = quote(table.name);
  if (table.selfLinks.length === 0) return `SELECT row_to_json(t)::text AS row FROM ${name} t`;
  if (table.selfLinks.length > 1) throw new Error(`${table.name} refers to itself through more than one foreign key; the copy orders one only`);
  const links = table.selfLinks[0]!;
  const referenced = links.map(([, parent]) => quote(parent));
  const free = links.map(([child]) => `${quote(child)} IS NULL`).join(' OR ');
  const join = links.map(([child, parent]) => `c.${quote(child)} = w.${quote(parent)}`).join(' AND ');
  return `WITH RECURSIVE walk AS (
      SELECT ctid AS row_id, ${referenced.join(', ')}, 0 AS level FROM ${name} WHERE ${free}
      UNION ALL
      SELECT c.ctid, ${referenced.map((column) => `c.${column}`).join(', ')}, w.level + 1 FROM ${name} c JOIN walk w ON ${join}
    )
    SELECT row_to_json(t)::text AS row FROM ${name} t JOIN (SELECT row_id, max(level) AS level FROM walk GROUP BY row_id) o ON t.ctid = o.row_id ORDER BY o.level`;
}

/** Count and checksum of a table: an md5 over the md5s of its rows' text, sorted, so the order rows were stored in does not matter. */
export function checksumQuery(table: TablePlan): string {
  return `SELECT count(*)::bigint AS rows, md5(coalesce(string_agg(h, '' ORDER BY h), '')) AS checksum FROM (SELECT md5(t::text) AS h FROM ${quote(table.name)} t) s`;
}

/** Text output that is the same on both sides whatever their settings, for the checksums. */
export const SESSION_SETTINGS = `SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'; SET extra_float_digits = 1; SET bytea_output = 'hex'`;
