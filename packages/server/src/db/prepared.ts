import { createHash } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { databaseUnavailableError, isPgConnectionFailure } from './database-unavailable.ts';

/** The part of a `pg` Client (what Sequelize's PostgreSQL pool hands out) a prepared query needs. */
interface PgClient {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
  _invalid?: boolean;
}

/** A statement PostgreSQL parses once per connection; later executions send only its name and values. */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

const named = new Map<string, PreparedStatement>();

/**
 * Names a statement by a hash of its text, so equal texts share one server-side statement. Hot
 * statements are built the same way every time, so the few texts are remembered.
 */
export function prepared(text: string): PreparedStatement {
  let statement = named.get(text);
  if (!statement) {
    statement = { name: `svc_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text };
    if (named.size < 256) named.set(text, statement);
  }
  return statement;
}

/** Sequelize's bind rule for PostgreSQL, kept so results match its path: NUL in a string is sent as `\\0`. */
const bindValue = (value: unknown) => (typeof value === 'string' && value.includes('\0') ? value.replace(/\0/g, '\\0') : value);

/**
 * Runs a hot statement outside any transaction as a named prepared statement on a connection of
 * Sequelize's pool: PostgreSQL skips parsing (and, once it settles on a generic plan, planning)
 * it, the request carries the name instead of the text, and Sequelize's per-query work (bind
 * rewriting, result shaping) is skipped. Rows come back as `pg` parsed them, with Sequelize's type
 * parsers. Errors are `pg`'s own (`code`, `detail` at the top level, not under `parent`).
 */
export async function queryPrepared<T>(sequelize: Sequelize, statement: PreparedStatement, values: unknown[]): Promise<T[]> {
  return queryDriver<T>(sequelize, { name: statement.name, text: statement.text, values });
}

/**
 * Runs a statement written with positional `$n` parameters (an SqlParams-built read whose shape
 * is not kept as a named statement) unnamed, through the same driver path as queryPrepared: the
 * text is the one queryPrepared would name, so both paths take the same SQL. Every other query
 * goes through `sequelize.query` with named `replacements` (docs/contributing.md, "Code conventions").
 */
export async function queryPositional<T>(sequelize: Sequelize, text: string, values: unknown[]): Promise<T[]> {
  return queryDriver<T>(sequelize, { text, values });
}

async function queryDriver<T>(sequelize: Sequelize, statement: { name?: string; text: string; values: unknown[] }): Promise<T[]> {
  const manager = sequelize.connectionManager;
  const client = (await manager.getConnection({ type: 'write' })) as PgClient;
  try {
    return (await client.query({ ...statement, values: statement.values.map(bindValue) })).rows as T[];
  } catch (error) {
    // As Sequelize does: a connection that failed below SQL (no SQLSTATE) is not handed out again.
    if (typeof (error as { code?: unknown }).code !== 'string' || !/^[0-9A-Z]{5}$/.test((error as { code: string }).code)) client._invalid = true;
    // pg's own errors, unlike Sequelize's, carry no type saying the connection failed.
    throw isPgConnectionFailure(error) ? databaseUnavailableError(error) : error;
  } finally {
    manager.releaseConnection(client);
  }
}
