import { createServer as createTcpServer, connect } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { openDatabase } from '../src/db/database.ts';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { createLogger } from '../src/observability/logger.ts';

/**
 * The embedded database (PGlite behind a socket) takes one connection at a time, and frees its
 * slot a moment after a connection closes. Sequelize asks a new database its version on a
 * connection of its own and opens the pool's right after closing it; through anything that
 * delays the close (a proxy, a loaded machine) the pool's connection was refused, and the
 * server did not start ("Connection terminated unexpectedly", database-outage in CI). Opening
 * the embedded database must take exactly one connection: this test counts them.
 */
test('opening the embedded database takes one connection, not a second one to ask its version', async (t) => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-one-connection-'));
  const log = createLogger('silent');
  const embedded = await startEmbeddedDatabase(dataDir, log, { migratedTemplate: false });
  const target = new URL(embedded.url);
  let connections = 0;
  const counter = createTcpServer((inbound) => {
    connections += 1;
    const outbound = connect(Number(target.port), target.hostname);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end);
    outbound.on('error', end);
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  const counted = new URL(embedded.url);
  counted.port = String((counter.address() as { port: number }).port);
  const database = await openDatabase({
    databaseUrl: undefined,
    dataDir,
    poolMax: 1,
    log,
    embedded: Promise.resolve({ ...embedded, url: counted.toString() }),
  });
  try {
    const [rows] = await database.sequelize.query('SELECT 1 AS one');
    t.deepEqual(rows, [{ one: 1 }]);
    t.is(connections, 1);
    t.regex(embedded.serverVersion, /^\d+\.\d+/);
  } finally {
    await database.close();
    await new Promise<void>((resolve) => counter.close(() => resolve()));
    await rm(dataDir, { recursive: true, force: true });
  }
});
