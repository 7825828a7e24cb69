import type { Logger } from 'pino';
import { fork, type ChildProcess } from 'node:child_process';
import { access } from 'node:fs/promises';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMBEDDED_MALLOC_ARENAS } from '../launch.ts';
import type { EmbeddedMessage } from './embedded-process.ts';
import { migrationsFingerprint } from './migrations/fingerprint.ts';
import { migrations } from './migrations/index.ts';

export interface EmbeddedPostgres {
  /** A postgres:// URL on a private loopback port, for `pg` and Sequelize. */
  url: string;
  /** PostgreSQL's version inside PGlite (`SHOW server_version`, e.g. `18.6`). */
  serverVersion: string;
  /** The database process (for the memory bench, which counts it with the server). */
  pid: number;
  close(): Promise<void>;
}

/** embedded-process.ts here, its build in a published package (the package's own export, so both resolve). */
const PROCESS_FILE = fileURLToPath(import.meta.resolve('@svc/server/embedded-process'));

/**
 * V8 flags of the database process. `--liftoff-only`: PostgreSQL's WASM runs on V8's baseline
 * compiler only. With the optimising tier, V8 recompiles the functions that get hot, and one of
 * them, PostgreSQL's SQL parser (`raw_parser`, 105 KB of WASM), takes 576 MiB of compiler memory
 * and 4 s of CPU (measured with --trace-wasm-compilation-times), at start-up or on the first
 * queries; the process kept about 150 MiB of it afterwards. Without it, database work costs
 * 15-20% more CPU once warm (a 2000-row insert and select workload: 2.9-3.4 s against 2.6-2.8 s
 * per round) and less before (no recompilation: 3.3 s against 4.9 s for the first round). The
 * server's own process keeps the optimising tier, which the PDF engine's WASM needs (1.7x slower
 * without it). A small young generation: the process only passes protocol bytes along.
 */
const V8_FLAGS = ['--liftoff-only', '--max-semi-space-size=2'];
/** How long a clean close (checkpoint) may take before the process is killed. */
const CLOSE_TIMEOUT_MS = 30_000;

const hasCluster = (dataDir: string) =>
  access(path.join(dataDir, 'pgdata', 'PG_VERSION')).then(
    () => true,
    () => false,
  );

type ProcessMode = 'prepare' | 'serve' | 'serve-after-prepare';

/**
 * Starts embedded-process.ts in `mode`. `ready` is its first word: its port (`serve`), or its
 * end once the cluster is made (`prepare`, answering 0).
 */
function startProcess(
  dataDir: string,
  mode: ProcessMode,
  migrationsFingerprint?: string,
): { child: ChildProcess; exited: Promise<string>; ready: Promise<{ port: number; serverVersion: string }> } {
  // The server's compile cache, when it has one (bin.ts), spares this process Node's TypeScript
  // stripper too; two allocator arenas, as the server on the embedded database has (launch.ts).
  const compileCache = module.getCompileCacheDir?.();
  const child = fork(PROCESS_FILE, [dataDir, mode, ...(migrationsFingerprint ? [migrationsFingerprint] : [])], {
    execArgv: V8_FLAGS,
    env: {
      ...process.env,
      ...(compileCache && !process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: compileCache } : {}),
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? EMBEDDED_MALLOC_ARENAS,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `exit code ${code}`)));
  const ready = new Promise<{ port: number; serverVersion: string }>((resolve, reject) => {
    child.once('message', (message: EmbeddedMessage) => {
      if (message.type === 'failed') reject(new Error(message.message));
      else if (message.type === 'listening') resolve({ port: message.port, serverVersion: message.serverVersion });
    });
    child.once('error', reject);
    void exited.then((reason) =>
      mode === 'prepare' && reason === 'exit code 0'
        ? resolve({ port: 0, serverVersion: '' })
        : reject(new Error(`The embedded database process ended (${reason}) before it ${mode === 'prepare' ? 'made the cluster' : 'listened'}`)),
    );
  });
  // Awaited by the caller, or not at all when the caller gave up on this process.
  ready.catch(() => {});
  return { child, exited, ready };
}

/**
 * A new data directory: a short-lived process makes the cluster (see embedded-process.ts), and
 * the database process starts beside it, loading PGlite and compiling its WebAssembly meanwhile;
 * it opens the data once told the cluster is there.
 */
async function startOnNewDirectory(dataDir: string, migrationsFingerprint: string | undefined): Promise<ReturnType<typeof startProcess>> {
  const serving = startProcess(dataDir, 'serve-after-prepare');
  try {
    await startProcess(dataDir, 'prepare', migrationsFingerprint).ready;
  } catch (error) {
    serving.child.kill('SIGKILL');
    await serving.exited;
    throw error;
  }
  // A process that ended meanwhile has `ready` rejected already.
  serving.child.send('prepared', () => {});
  return serving;
}

/**
 * PGlite (PostgreSQL compiled to WASM) persisted under the data directory, in a process of its
 * own (embedded-process.ts), exposed on a loopback port so the same `pg` driver, SQL and
 * migrations serve both embedded and real PostgreSQL. PGlite is one session, so the pool in
 * front of it must hold one connection. `onExit` hears of the process ending other than by
 * `close()` (a crash: the server has no database from then on). With `migratedTemplate`, a new
 * data directory starts from the template made with these migrations applied, when there is one
 * (pglite-template.ts).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  onExit: (reason: string) => void = () => {},
  options: { migratedTemplate?: boolean } = {},
): Promise<EmbeddedPostgres> {
  const { child, exited, ready } = (await hasCluster(dataDir))
    ? startProcess(dataDir, 'serve')
    : await startOnNewDirectory(dataDir, options.migratedTemplate ? migrationsFingerprint(migrations) : undefined);
  const { port, serverVersion } = await ready;
  let closing = false;
  void exited.then((reason) => closing || onExit(reason));
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    serverVersion,
    pid: child.pid!,
    async close() {
      if (closing) return void (await exited);
      closing = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const kill = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
      // A process that ended meanwhile has nothing to close; its exit is awaited below.
      child.send('close', (error) => error && child.kill('SIGKILL'));
      const reason = await exited;
      clearTimeout(kill);
      if (reason !== 'exit code 0') throw new Error(`The embedded database process did not close cleanly (${reason})`);
    },
  };
}

/**
 * Starts the embedded database under `dataDir`, logging a crash of its process later. Light to
 * import (no driver, no ORM): `svc-server start` calls it before the server's modules load, and a
 * new data directory of its gets the migrated template (`migratedTemplate: false` for one whose
 * migrations are to run, as `svc-server migrate` and servers built in-process do).
 */
export function startEmbeddedDatabase(
  dataDir: string,
  log: Pick<Logger, 'error'>,
  options: { migratedTemplate?: boolean } = { migratedTemplate: true },
): Promise<EmbeddedPostgres> {
  return startEmbeddedPostgres(
    dataDir,
    (reason) => log.error({ reason }, 'the embedded database process ended unexpectedly: no database until the server restarts'),
    options,
  );
}
