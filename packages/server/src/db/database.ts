import { Sequelize } from 'sequelize';
import type { Logger } from 'pino';
import { startEmbeddedDatabase, type EmbeddedPostgres } from './embedded.ts';
import { traceQueries } from './query-trace.ts';

export interface Database {
  readonly sequelize: Sequelize;
  readonly kind: 'embedded' | 'postgres';
  /** Round trip to the database; throws when it is unreachable. */
  ping(): Promise<number>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  poolMax: number;
  log: Logger;
  /**
   * The embedded database's process when the caller already began starting it (`svc-server
   * start` begins it while the server's modules load, which do not need it yet).
   */
  embedded?: Promise<EmbeddedPostgres>;
  /** The server's version when the caller knows it (an embedded database it started): no connection is opened to ask it. */
  serverVersion?: string;
}

/** How long the embedded database's connection stays open unused. */
const EMBEDDED_IDLE_MS = 10 * 60_000;
/** How long a PostgreSQL connection of the pool stays open unused: longer than the backstops' period. */
const POSTGRES_IDLE_MS = 30_000;

/** `18.6` → `18.6.0`: Sequelize compares its databaseVersion as semver. */
const semverOf = (version: string) => {
  const [major = '0', minor = '0', patch = '0'] = (/^\d+(?:\.\d+){0,2}/.exec(version)?.[0] ?? '0').split('.');
  return `${major}.${minor}.${patch}`;
};

/** PostgreSQL when a URL is given; otherwise the embedded PGlite under the data directory. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  let embedded: EmbeddedPostgres | undefined;
  let url = options.databaseUrl;
  if (!url) {
    // Begun here (migrate, servers built in-process), a new database runs every migration.
    embedded = await (options.embedded ?? startEmbeddedDatabase(options.dataDir, options.log, { migratedTemplate: false }));
    url = embedded.url;
  }
  const sequelize = new Sequelize(url, {
    dialect: 'postgres',
    logging: (sql: string) => options.log.trace({ sql }, 'sql'),
    // PGlite is a single session: one connection, and queries queue for it.
    // `evict`: how often the pool looks for connections idle past `idle`; Sequelize's default,
    // every second, woke an idle server once a second for ever (issue 42). `idle` is longer than
    // the backstops' period (db/backstop.ts), so an idle server's reads do not each open a
    // connection: on PostgreSQL a backend forked, authenticated and set up, with transactions of
    // its own; on the embedded database `SET client_min_messages` and `DEALLOCATE ALL`, three
    // statements for the turn's one. The embedded database's one connection is its process's
    // alone and costs nothing open: it is kept ten minutes.
    pool: embedded
      ? { max: 1, min: 0, idle: EMBEDDED_IDLE_MS, evict: EMBEDDED_IDLE_MS, acquire: 60_000 }
      : { max: options.poolMax, min: 0, idle: POSTGRES_IDLE_MS, evict: 10_000, acquire: 60_000 },
    define: { underscored: true, timestamps: false },
    // Sequelize asks a new database its version on a connection of its own, outside the pool, and
    // opens the pool's as soon as that one is closed. PGlite's socket takes one connection at a
    // time and frees the slot a moment after the close: the pool's connection could be refused
    // ("Connection terminated unexpectedly"), as it was through database-outage's relay in CI.
    // The embedded process tells the version (embedded.ts), so no second connection is opened.
    ...((embedded?.serverVersion ?? options.serverVersion) ? { databaseVersion: semverOf(embedded?.serverVersion ?? options.serverVersion!) } : {}),
  });
  traceQueries(sequelize);
  // PGlite is one session whatever the connection: the statements queryPrepared named on a
  // connection that was lost (an outage, an idle connection closed) are still there, and the
  // next connection's client, which has not seen them, is refused when it names one again
  // ("prepared statement ... already exists"). The old connection is gone (one at a time), so
  // its statements go with it.
  if (embedded)
    sequelize.addHook('afterConnect', async (connection) => {
      await (connection as { query(sql: string): Promise<unknown> }).query('DEALLOCATE ALL');
    });
  try {
    await sequelize.authenticate();
  } catch (error) {
    await sequelize.close().catch(() => {});
    await embedded?.close().catch(() => {});
    throw new Error(`Cannot reach the database${embedded ? ' (embedded)' : ''}: ${(error as Error).message}`);
  }
  return {
    sequelize,
    kind: embedded ? 'embedded' : 'postgres',
    async ping() {
      const started = performance.now();
      await sequelize.query('SELECT 1');
      return performance.now() - started;
    },
    async close() {
      await sequelize.close();
      await embedded?.close();
    },
  };
}
