import { access } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import pg from 'pg';
import { openDatabase } from '../database.ts';
import { runMigrations } from '../migrate.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../embedded.ts';

/** Where a copy reads or writes: a PostgreSQL URL, or the embedded database of a data directory. */
export type Endpoint = { kind: 'url'; url: string } | { kind: 'dir'; dataDir: string };

/** A user's `--to`/`--from` word: a postgres:// URL, or else a data directory's path. */
export function parseEndpoint(text: string): Endpoint {
  return /^postgres(ql)?:\/\//i.test(text) ? { kind: 'url', url: text } : { kind: 'dir', dataDir: path.resolve(text) };
}

export const describeEndpoint = (endpoint: Endpoint) =>
  endpoint.kind === 'dir' ? `the embedded database in ${endpoint.dataDir}` : `PostgreSQL at ${redactUrl(endpoint.url)}`;

/** A URL with its password hidden, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** True when the data directory already has an embedded database cluster. */
export const hasEmbeddedCluster = (dataDir: string) =>
  access(path.join(dataDir, 'pgdata', 'PG_VERSION')).then(
    () => true,
    () => false,
  );

export interface OpenEndpoint {
  url: string;
  readonly client: pg.Client;
  /** Applies this server's migrations (the client is let go meanwhile: the embedded database is one session). */
  migrate(log: Logger): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects to an endpoint. A data directory's database is started here, which takes the
 * directory's lock (db/data-dir-lock.ts): a server running on it makes this wait, then fail
 * with the server's pid. The embedded database is one session, so the caller holds one client.
 */
export async function openEndpoint(endpoint: Endpoint, options: { newDirectoryFromTemplate?: boolean } = {}): Promise<OpenEndpoint> {
  let embedded: EmbeddedPostgres | undefined;
  if (endpoint.kind === 'dir')
    embedded = await startEmbeddedPostgres(endpoint.dataDir, () => {}, { migratedTemplate: options.newDirectoryFromTemplate ?? false });
  const url = embedded ? embedded.url : (endpoint as { url: string }).url;
  const connect = async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  };
  let client: pg.Client;
  try {
    client = await connect();
  } catch (error) {
    await embedded?.close().catch(() => {});
    throw error;
  }
  return {
    url,
    get client() {
      return client;
    },
    async migrate(log) {
      await client.end();
      const database = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 1, log, ...(embedded ? { serverVersion: embedded.serverVersion } : {}) });
      try {
        await runMigrations(database.sequelize, log);
      } finally {
        await database.close();
      }
      client = await connect();
    },
    async close() {
      await client.end().catch(() => {});
      await embedded?.close();
    },
  };
}
