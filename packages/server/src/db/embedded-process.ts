/**
 * The embedded database's own process, started by embedded.ts (never run by hand): PGlite on
 * the data directory named by its first argument, served on a loopback port by pglite-socket.
 * It tells the server the port over IPC (`EmbeddedMessage`), closes the database cleanly when
 * the server sends `close`, and ends at once when the server is gone (its IPC channel closes):
 * then it is a crash of the server, and the database recovers from its WAL on the next start, as
 * it did when it lived in the server's process.
 *
 * With `prepare` as second argument it only makes the cluster of a new data directory (from the
 * template; a third argument names the migrations' fingerprint, for the migrated one) and ends:
 * unpacking 40 MB of files leaves about 25 MiB in the allocator of the process that did it
 * (measured: the database process of a fresh directory, 186 MiB against 167 when another process
 * had unpacked), so a short-lived process does it. The database process of a new directory is
 * started beside it with `serve-after-prepare`: it loads PGlite meanwhile and opens the data when
 * the server tells it (`prepared`).
 */
import { access, mkdir, readFile, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { lockDataDirectory } from './data-dir-lock.ts';
import { migratedTemplateFile, templateFile, unpackTemplate } from './pglite-template.ts';

export type EmbeddedMessage = { type: 'listening'; port: number; serverVersion: string } | { type: 'prepared' } | { type: 'failed'; message: string };

/**
 * PostgreSQL's memory settings inside the WASM heap, as command-line `-c` options (they win over
 * the cluster's postgresql.conf, so existing data directories get them too). initdb writes
 * `shared_buffers = 128MB`, which PGlite allocates and touches at start: 150 MiB resident for an
 * empty database. 16 MiB (2048 pages) holds the working set of the single-node use the embedded
 * database is for; a page not in it is read back from the data directory (the OS page cache),
 * not from a disk seek. Measured on a 2000-row insert and select workload: the same CPU time per
 * round with 16 MiB as with 128 MiB, and 120 MiB less resident.
 */
const memorySettings = ['-c', 'shared_buffers=16MB', '-c', 'maintenance_work_mem=16MB'];

/**
 * Makes sure `directory` holds a cluster, from a template when there is one (else PGlite's initdb
 * will): the migrated template made for `migrationsFingerprint` when given and present, else the
 * plain one.
 */
async function prepare(directory: string, migrationsFingerprint: string | undefined): Promise<void> {
  const initialised = await access(path.join(directory, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (!initialised) {
    // A new cluster starts from the install-time template when there is one (see
    // pglite-template.ts); an empty directory left by an earlier start makes way for it.
    await rmdir(directory).catch(() => {});
    await unpackTemplate(directory, migrationsFingerprint ? [migratedTemplateFile(migrationsFingerprint), templateFile] : [templateFile]);
  }
  await mkdir(directory, { recursive: true, mode: 0o700 });
}

/**
 * PGlite's modules and its WebAssembly compiled, begun before the data is ready: the `prepare`
 * step needs neither, and a database process started beside it (a new data directory) does this
 * while the template unpacks. PGlite compiles the WebAssembly itself when the file is not where
 * its package keeps it.
 */
async function loadPGlite() {
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-socket')]);
  const wasmModule = await readFile(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite'))).then(
    (bytes) => WebAssembly.compile(bytes),
    () => undefined,
  );
  return { PGlite, PGLiteSocketServer, wasmModule };
}

async function open(
  directory: string,
  loading: ReturnType<typeof loadPGlite>,
): Promise<{ db: PGlite; server: PGLiteSocketServer; port: number; serverVersion: string }> {
  const { PGlite, PGLiteSocketServer, wasmModule } = await loading;
  const db = await PGlite.create({
    dataDir: directory,
    startParams: [...PGlite.defaultStartParams, ...memorySettings],
    ...(wasmModule ? { pgliteWasmModule: wasmModule } : {}),
  });
  // Asked here, in-process, so the server's driver need not open a connection of its own to ask it
  // (see database.ts: the socket takes one connection at a time).
  const { rows } = await db.query<{ server_version: string }>('SHOW server_version');
  const serverVersion = rows[0]!.server_version;
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
  await server.start();
  const connection = server.getServerConn();
  const port = Number(connection.split(':').pop());
  if (!Number.isInteger(port) || port <= 0) throw new Error(`Embedded database did not report its port (${connection})`);
  return { db, server, port, serverVersion };
}

if (!process.send) throw new Error('embedded-process.ts is started by the server (embedded.ts), with an IPC channel');
const send = (message: EmbeddedMessage, then?: () => void) => process.send!(message, undefined, {}, then);
// The server drains before it closes the database: a Ctrl-C reaching the whole process group,
// or a supervisor's SIGTERM to every process, must not end the database under it.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => {});
/** Gives up the data directory (see data-dir-lock.ts); set once it is held. */
let release = () => {};
process.on('exit', () => release());
// The server is gone without closing the database (killed): end as it did.
process.on('disconnect', () => process.exit(1));

async function main(dataDir: string, mode: string | undefined, migrationsFingerprint: string | undefined): Promise<void> {
  const loading = mode === 'prepare' ? undefined : loadPGlite();
  // Its failure is reported where it is awaited (open), as the start's failure.
  loading?.catch(() => {});
  // Until then the `prepare` process holds the data directory and is making the cluster.
  if (mode === 'serve-after-prepare') await new Promise<void>((resolve) => process.on('message', (message) => message === 'prepared' && resolve()));
  const directory = path.join(dataDir, 'pgdata');
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  release = await lockDataDirectory(path.join(dataDir, 'pgdata.pid'));
  await prepare(directory, migrationsFingerprint);
  if (mode === 'prepare') {
    send({ type: 'prepared' }, () => process.exit(0));
    return;
  }
  const { db, server, port, serverVersion } = await open(directory, loading!);
  process.on('message', (message) => {
    if (message !== 'close') return;
    (async () => {
      await server.stop();
      await db.close();
    })().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`svc embedded database: closing failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  });
  send({ type: 'listening', port, serverVersion });
}

main(process.argv[2]!, process.argv[3], process.argv[4]).catch((error: unknown) =>
  send({ type: 'failed', message: (error as Error).message }, () => process.exit(1)),
);
