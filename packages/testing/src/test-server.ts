import type { Logger } from 'pino';
import { createClient, type SvcClientOptions, type SvcClient } from '@svc/client';
import { createLogger, createServer, loadConfig, startEmbeddedDatabase, type CreateServerOptions, type SvcServer } from '@svc/server';
import { createTestDatabase, type TestDatabase } from './test-database.ts';

export interface TestServer {
  server: SvcServer;
  baseUrl: string;
  apiUrl: string;
  operatorToken: string;
  database: TestDatabase;
  /** A client holding the operator token. */
  operator: SvcClient;
  /** A client with no credential, or with the options given. */
  client(options?: SvcClientOptions): SvcClient;
  close(): Promise<void>;
}

/** Seams into the server for paths a test cannot reach from outside (a slow or unloadable worker module, ...). */
export type TestSeams = NonNullable<CreateServerOptions['testSeams']>;

export interface TestServerOptions {
  /** Extra environment for the configuration (`SVC_OPEN_ACCESS`, limits, ...). */
  env?: Record<string, string>;
  /** Share a database with another server (two replicas); the caller then drops it. */
  database?: TestDatabase;
  /** A logger of the test's own (to read what the server logs). */
  logger?: Logger;
  /** Seams into the server for paths a test cannot reach from outside (see TestSeams). */
  testSeams?: TestSeams;
}

/**
 * A real server on a loopback port 0 over an isolated database, with responses checked
 * against the contract. Close it in `test.after.always`.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  // A database of its own starts migrated (a copy of a migrated PostgreSQL template, or the
  // embedded database's migrated template), as `svc-server start` begins a new embedded one: a
  // start that ran every migration took 5.0-7.1 s against 2.2-4.0 s on PGlite at load 9. What the
  // migrations make is proven by server-lifecycle, migrated-template and migrations-by-name.
  const database = options.database ?? (await createTestDatabase({ migrated: true }));
  const ownsDatabase = !options.database;
  const config = loadConfig({
    SVC_HOST: '127.0.0.1',
    SVC_PORT: '0',
    SVC_DATA_DIR: database.dataDir,
    DATABASE_URL: database.databaseUrl,
    SVC_LOG_LEVEL: process.env.SVC_TEST_LOG_LEVEL ?? 'silent',
    SVC_VALIDATE_RESPONSES: 'true',
    SVC_SHUTDOWN_TIMEOUT_MS: '2000',
    ...options.env,
  });
  const embeddedDatabase =
    ownsDatabase && !config.databaseUrl
      ? startEmbeddedDatabase(config.dataDir, options.logger ?? createLogger('silent'), { migratedTemplate: true })
      : undefined;
  let server: SvcServer;
  try {
    server = await createServer(config, { logger: options.logger, testSeams: options.testSeams, ...(embeddedDatabase ? { embeddedDatabase } : {}) });
  } catch (error) {
    // A server that failed before opening its database leaves the database's process to us.
    await embeddedDatabase?.then((embedded) => embedded.close()).catch(() => {});
    throw error;
  }
  const { baseUrl, apiUrl } = await server.listen();
  const client = (clientOptions: SvcClientOptions = {}) => createClient({ baseUrl, apiUrl, retry: 0, token: undefined, ...clientOptions });
  return {
    server,
    baseUrl,
    apiUrl,
    operatorToken: server.operatorToken,
    database,
    operator: client({ token: server.operatorToken }),
    client,
    async close() {
      await server.close();
      if (ownsDatabase) await database.drop();
    },
  };
}
