import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { loadTemplate } from './pglite-template.ts';

export interface EmbeddedPostgres {
  /** A postgres:// URL on a private loopback port, for `pg` and Sequelize. */
  url: string;
  close(): Promise<void>;
}

/**
 * PGlite (PostgreSQL compiled to WASM) persisted under the data directory, exposed on a
 * loopback port so the same `pg` driver, SQL and migrations serve both embedded and real
 * PostgreSQL. PGlite is one session, so the pool in front of it must hold one connection.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const directory = path.join(dataDir, 'pgdata');
  const initialised = await access(path.join(directory, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  await mkdir(directory, { recursive: true, mode: 0o700 });
  // A new cluster starts from the install-time template when there is one (see pglite-template.ts).
  const template = initialised ? undefined : await loadTemplate();
  const db = await PGlite.create({ dataDir: directory, ...(template ? { loadDataDir: template } : {}) });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
  await server.start();
  const connection = server.getServerConn();
  const port = Number(connection.split(':').pop());
  if (!Number.isInteger(port) || port <= 0) throw new Error(`Embedded database did not report its port (${connection})`);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
