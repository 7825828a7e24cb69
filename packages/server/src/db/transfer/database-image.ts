import type pg from 'pg';
import { migrations } from '../migrations/index.ts';
import { checksumQuery, quote, readSchemaPlan, rowsQuery, SESSION_SETTINGS, type SchemaPlan, type TablePlan } from './schema-plan.ts';

/** A failure the user can act on: printed as it is, without a stack. */
export class TransferError extends Error {}

export interface TableSummary {
  table: string;
  rows: number;
  checksum: string;
}

export interface SequenceValue {
  name: string;
  value: string;
  called: boolean;
}

/**
 * A whole svc database as the copy reads it: the schema's plan, each table's row count and
 * checksum, the sequences, and the rows of a table in batches of JSON texts. Read from a live
 * database (`readDatabaseImage`) or from a backup file (backup/), written by `writeDatabaseImage`.
 */
export interface DatabaseImage {
  plan: SchemaPlan;
  tables: TableSummary[];
  sequences: SequenceValue[];
  batches(table: TablePlan): AsyncIterable<string[]>;
}

/** Rows fetched from the source at a time. */
const FETCH_ROWS = 1000;
/** A batch written to the target is this many bytes of JSON at most (one oversized row goes alone). */
const WRITE_BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Opens one REPEATABLE READ snapshot on `client` (kept until the client ends) and describes the
 * database in it: counts, checksums and rows all come from the same instant, so a server writing
 * meanwhile never leaves a torn copy. The source must carry exactly this server's migrations, so
 * the target, migrated by this server, has the same tables and columns.
 */
export async function readDatabaseImage(client: pg.Client): Promise<DatabaseImage> {
  await client.query(SESSION_SETTINGS);
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  const registered = await client.query<{ found: string | null }>(`SELECT to_regclass('svc_migrations')::text AS found`);
  if (!registered.rows[0]?.found) throw new TransferError('The source holds no svc database (it has no svc_migrations table)');
  const applied = (await client.query<{ name: string }>('SELECT name FROM svc_migrations ORDER BY name')).rows.map((row) => row.name);
  const known = migrations.map((migration) => migration.name);
  const missing = known.filter((name) => !applied.includes(name));
  const unknown = applied.filter((name) => !known.includes(name));
  if (unknown.length) throw new TransferError(`The source was migrated by a newer svc-server (${unknown.join(', ')}): use that version to copy it`);
  if (missing.length)
    throw new TransferError(`The source lacks ${missing.length} migration(s) of this svc-server (${missing[0]}...): run \`svc-server migrate\` on it first`);
  const plan = await readSchemaPlan(client);
  const tables: TableSummary[] = [];
  for (const table of plan.groups.flat()) {
    const { rows } = await client.query<{ rows: string; checksum: string }>(checksumQuery(table));
    tables.push({ table: table.name, rows: Number(rows[0]!.rows), checksum: rows[0]!.checksum });
  }
  const sequences: SequenceValue[] = [];
  for (const name of plan.sequences) {
    const { rows } = await client.query<{ last_value: string; is_called: boolean }>(`SELECT last_value::text, is_called FROM ${quote(name)}`);
    sequences.push({ name, value: rows[0]!.last_value, called: rows[0]!.is_called });
  }
  let cursors = 0;
  return {
    plan,
    tables,
    sequences,
    async *batches(table) {
      const cursor = `svc_copy_${++cursors}`;
      await client.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${rowsQuery(table)}`);
      try {
        for (;;) {
          const { rows } = await client.query<{ row: string }>(`FETCH ${FETCH_ROWS} FROM ${cursor}`);
          if (rows.length === 0) return;
          yield rows.map((row) => row.row);
        }
      } finally {
        await client.query(`CLOSE ${cursor}`);
      }
    },
  };
}

/** True when the database at `client` has svc's tables (it was migrated, served, or copied into). */
export async function holdsSvcDatabase(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ found: string | null }>(`SELECT to_regclass('svc_migrations')::text AS found`);
  return Boolean(rows[0]?.found);
}

export type ProgressReport = (line: string) => void;
/** A long table reports its progress every this many rows. */
const PROGRESS_EVERY_ROWS = 10_000;

/**
 * Writes `image` into the migrated database at `client`: every table emptied, then the tables
 * written group by group (one transaction each, parents before children), the sequences set,
 * and every table's count and checksum compared with the image's. Any difference is an error
 * naming the table; the target is then partial and a rerun needs `--replace`.
 */
export async function writeDatabaseImage(client: pg.Client, image: DatabaseImage, progress: ProgressReport): Promise<TableSummary[]> {
  await client.query(SESSION_SETTINGS);
  const targetPlan = await readSchemaPlan(client);
  const describe = (plan: SchemaPlan) => new Map(plan.groups.flat().map((table) => [table.name, [...table.columns].sort().join(',')] as const));
  const sourceTables = describe(image.plan);
  const targetTables = describe(targetPlan);
  for (const [table, columns] of sourceTables)
    if (targetTables.get(table) !== columns)
      throw new TransferError(`The target's table ${table} differs from the source's: are both at this svc-server's version?`);
  const expected = new Map(image.tables.map((summary) => [summary.table, summary]));
  const all = image.plan.groups.flat();
  // Migrations may have written rows of their own (settings, totals): the copy replaces them.
  await client.query(`TRUNCATE ${[...targetTables.keys()].map(quote).join(', ')}`);
  for (const group of image.plan.groups) {
    await client.query('BEGIN');
    try {
      for (const table of group) await writeTable(client, table, image, expected.get(table.name)?.rows ?? 0, progress);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    }
  }
  for (const sequence of image.sequences)
    await client.query('SELECT setval($1::regclass, $2::bigint, $3)', [quote(sequence.name), sequence.value, sequence.called]);
  const written: TableSummary[] = [];
  for (const table of all) {
    const { rows } = await client.query<{ rows: string; checksum: string }>(checksumQuery(table));
    const summary = { table: table.name, rows: Number(rows[0]!.rows), checksum: rows[0]!.checksum };
    const source = expected.get(table.name);
    if (!source || source.rows !== summary.rows || source.checksum !== summary.checksum)
      throw new TransferError(
        `Verification failed for ${table.name}: the source has ${source?.rows ?? 0} row(s) (md5 ${source?.checksum}), the target ${summary.rows} (md5 ${summary.checksum})`,
      );
    written.push(summary);
  }
  return written;
}

async function writeTable(client: pg.Client, table: TablePlan, image: DatabaseImage, total: number, progress: ProgressReport): Promise<void> {
  const columns = table.columns.map(quote).join(', ');
  const insert = `INSERT INTO ${quote(table.name)} (${columns}) OVERRIDING SYSTEM VALUE SELECT ${columns} FROM json_populate_recordset(NULL::${quote(table.name)}, $1::json)`;
  let pending: string[] = [];
  let pendingBytes = 0;
  let done = 0;
  let reported = 0;
  const flush = async () => {
    if (pending.length === 0) return;
    await client.query(insert, [`[${pending.join(',')}]`]);
    done += pending.length;
    pending = [];
    pendingBytes = 0;
    if (done - reported >= PROGRESS_EVERY_ROWS) {
      reported = done;
      progress(`  ${table.name}: ${done}/${total} rows`);
    }
  };
  if (total >= PROGRESS_EVERY_ROWS) progress(`${table.name}: ${total} rows`);
  for await (const batch of image.batches(table)) {
    for (const row of batch) {
      if (pendingBytes + row.length > WRITE_BATCH_BYTES) await flush();
      pending.push(row);
      pendingBytes += row.length;
    }
    await flush();
  }
  await flush();
}
