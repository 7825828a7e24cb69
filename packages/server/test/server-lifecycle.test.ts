import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { QueryTypes } from 'sequelize';
import { SVC_VERSION } from '@svc/schemas';
import { createLogger } from '../src/index.ts';
import { openDatabase } from '../src/db/database.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { migrations } from '../src/db/migrations/index.ts';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { waitUntil } from '@svc/testing/wait-until';

/** `svc-server` as a user runs it: a process, configured by its environment, logging JSON lines. */
const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const migrationNames = migrations.map((migration) => migration.name);

interface Running {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Parsed JSON log lines so far. */
  logs(): Array<Record<string, unknown>>;
  exited: Promise<{ code: number | null; at: number }>;
  /** Resolves with the first log line matching, or rejects when the process exits first. */
  logLine(predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

function envFor(database: TestDatabase | undefined, extra: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_') && name !== 'DATABASE_URL'));
  return {
    ...inherited,
    SVC_HOST: '127.0.0.1',
    SVC_PORT: '0',
    SVC_LOG_LEVEL: 'info',
    ...(database ? { SVC_DATA_DIR: database.dataDir } : {}),
    ...(database?.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...extra,
  };
}

/** Processes still running; a failed test must not leave a server behind. */
const running = new Set<ChildProcessWithoutNullStreams>();
test.after.always(() => {
  for (const child of running) child.kill('SIGKILL');
});

function runBin(args: string[], database?: TestDatabase, extra: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [BIN, ...args], { env: envFor(database, extra), stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      running.delete(child);
      resolve({ code, at: performance.now() });
    }),
  );
  child.stdin.end();
  const logs = () =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  let done = false;
  void exited.then(() => (done = true));
  const logLine = (predicate: (line: Record<string, unknown>) => boolean, timeoutMs = 30_000) =>
    waitUntil(
      () => `svc-server to log the line; stdout:\n${stdout}`,
      () => {
        const found = logs().find(predicate);
        if (!found && done) throw new Error(`svc-server exited before logging the line; stdout:\n${stdout}\nstderr:\n${stderr}`);
        return found;
      },
      { timeoutMs, intervalMs: 25 },
    );
  return { child, stdout: () => stdout, stderr: () => stderr, logs, exited, logLine };
}

const listening = (running: Running) => running.logLine((line) => line.msg === 'svc listening').then((line) => String(line.baseUrl));

const databases: TestDatabase[] = [];
async function freshDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  return database;
}
test.after.always(async () => {
  await Promise.all(databases.map((database) => database.drop()));
});

/**
 * A request whose body trickles in over a raw socket, so it is still in flight when the
 * server is told to stop. Resolves with the status line and when the server hung up.
 */
function trickledRequest(baseUrl: string, chunks: number, pauseMs: number, onFirstChunk: () => void) {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(performance.now())));
  socket.on('error', () => {});
  const bodyDone = (async () => {
    await new Promise((resolve) => socket.once('connect', resolve));
    // A route that reads its whole body before answering (JSON may end in blanks).
    const body = JSON.stringify({ redirect_uris: ['http://127.0.0.1:53682/callback'] }).padEnd(chunks * 10, ' ');
    socket.write(`POST /oauth/register HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    for (let index = 0; index < chunks; index++) {
      if (index > 0) await sleep(pauseMs);
      socket.write(body.slice(index * 10, index * 10 + 10));
      if (index === 0) onFirstChunk();
    }
    return performance.now();
  })();
  return { bodyDone, closed, received: () => received };
}

test.serial('--help and --version exit 0', async (t) => {
  const help = runBin(['--help']);
  t.is((await help.exited).code, 0, help.stderr());
  for (const text of ['start', 'migrate', '--version']) t.true(help.stdout().includes(text), text);
  const version = runBin(['--version']);
  t.is((await version.exited).code, 0);
  t.is(version.stdout().trim(), SVC_VERSION);
});

test.serial('a bad environment value stops the server with exit 1, naming the variable and what it expected', async (t) => {
  const single = runBin(['start'], undefined, { SVC_PORT: 'abc', SVC_DATA_DIR: '/nonexistent/never-created' });
  t.is((await single.exited).code, 1);
  t.is(single.stderr(), 'svc-server: Invalid configuration:\n  - SVC_PORT="abc": expected a port number from 0 to 65535\n');
  t.is(single.stdout(), '', 'nothing started');

  // Every bad variable is reported at once; secrets in bad values are never echoed.
  const many = runBin(['start'], undefined, {
    SVC_PORT: '65536',
    DATABASE_URL: 'mysql://admin:hunter2@db/x',
    SVC_LOG_LEVEL: 'loud',
    SVC_SHUTDOWN_TIMEOUT_MS: 'soon',
    SVC_OPERATOR_TOKEN: 'short-secret',
  });
  t.is((await many.exited).code, 1);
  const expected = [
    /SVC_PORT="65536": expected a port number from 0 to 65535/,
    /DATABASE_URL="mysql:\/\/admin:\*\*\*@db\/x": expected a PostgreSQL URL such as postgres:\/\//,
    /SVC_LOG_LEVEL="loud": .*expected one of "fatal"\|"error"\|"warn"\|"info"/,
    /SVC_SHUTDOWN_TIMEOUT_MS="soon": expected milliseconds from 0 to 600000/,
    /SVC_OPERATOR_TOKEN=\(12 characters, not shown\): must be at least 16 characters/,
  ];
  for (const pattern of expected) t.regex(many.stderr(), pattern);
  t.false(many.stderr().includes('short-secret') || many.stderr().includes('hunter2'));
});

test.serial('migrate alone, then two starts on the same data: token file 0600, drain on SIGTERM, nothing migrated twice', async (t) => {
  const database = await freshDatabase();
  const tokenFile = path.join(database.dataDir, 'operator-token');
  const env = { SVC_SHUTDOWN_TIMEOUT_MS: '30000' };

  const migrate = runBin(['migrate'], database);
  t.is((await migrate.exited).code, 0, migrate.stderr());
  t.regex(migrate.stdout(), new RegExp(`Applied ${migrationNames.length} migration\\(s\\):\\n${migrationNames.map((name) => `  ${name}`).join('\\n')}\\n`));

  // The rows `migrate` wrote are read back by the next process: it applies nothing.
  const first = runBin(['start'], database, env);
  const baseUrl = await listening(first);
  // The console's address, the one a person opens, is printed with the others.
  t.is(first.logs().find((line) => line.msg === 'svc listening')?.console, `${baseUrl}/ui/`);
  t.deepEqual(
    first.logs().filter((line) => line.msg === 'migration applied'),
    [],
  );
  t.is((await first.logLine((line) => line.operatorTokenFile !== undefined)).operatorTokenFile, tokenFile);
  t.is((await stat(tokenFile)).mode & 0o777, 0o600);
  const token = (await readFile(tokenFile, 'utf8')).trim();
  t.is((await fetch(`${baseUrl}/v1/metrics`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  t.false(first.stdout().includes(token), 'the token itself is never logged');

  // SIGTERM while a request body is still arriving: the server stops accepting, waits for it, then exits 0.
  const inFlight = trickledRequest(baseUrl, 8, 150, () => first.child.kill('SIGTERM'));
  await first.logLine((line) => line.msg === 'draining in-flight requests');
  await t.throwsAsync(fetch(`${baseUrl}/healthz`), undefined, 'no new connection is accepted while draining');
  const bodyDone = await inFlight.bodyDone;
  const exit = await first.exited;
  t.is(exit.code, 0, first.stderr());
  t.true(exit.at >= bodyDone, 'the process waited for the request in flight');
  t.true(exit.at - bodyDone < 10_000, `exited ${Math.round(exit.at - bodyDone)} ms after the request ended, not at the shutdown timeout`);
  t.regex(inFlight.received(), /^HTTP\/1\.1 201 Created/);
  t.true((await inFlight.closed) <= exit.at);
  t.truthy(first.logs().find((line) => line.msg === 'stopped cleanly'));

  const second = runBin(['start'], database, env);
  const secondUrl = await listening(second);
  t.deepEqual(
    second.logs().filter((line) => line.msg === 'migration applied'),
    [],
  );
  t.is((await second.logLine((line) => line.operatorTokenFile !== undefined)).operatorTokenFile, tokenFile);
  t.is((await readFile(tokenFile, 'utf8')).trim(), token);
  t.is((await fetch(`${secondUrl}/v1/metrics`, { headers: { authorization: `Bearer ${token}` } })).status, 200, 'the same operator token');
  second.child.kill('SIGTERM');
  t.is((await second.exited).code, 0, second.stderr());

  const again = runBin(['migrate'], database);
  t.is((await again.exited).code, 0, again.stderr());
  t.regex(again.stdout(), /Nothing to migrate: the database is up to date\./);
  t.false(again.stdout().includes('Applied'));
});

test.serial('a SIGTERM during start-up stops cleanly: exit 0, never listening', async (t) => {
  const database = await freshDatabase();
  const server = runBin(['start'], database);
  await server.logLine((line) => typeof line.msg === 'string' && line.msg.startsWith('svc starting'));
  server.child.kill('SIGTERM');
  const { code } = await server.exited;
  t.is(code, 0, server.stderr());
  const messages = server.logs().map((line) => String(line.msg));
  t.true(
    messages.some((message) => message.startsWith('signal during start-up')),
    messages.join('\n'),
  );
  t.true(messages.includes('stopped cleanly'));
  t.false(messages.includes('svc listening'));
  // The data it started on is whole: a normal start afterwards serves.
  const again = runBin(['start'], database);
  const baseUrl = await listening(again);
  t.is((await fetch(`${baseUrl}/readyz`)).status, 200);
  again.child.kill('SIGTERM');
  t.is((await again.exited).code, 0);
});

test.serial('runMigrations started twice at once applies each migration exactly once', async (t) => {
  const database = await freshDatabase();
  const log = createLogger('silent');
  // On PostgreSQL: two separate pools, i.e. two replicas racing for the advisory lock.
  // Embedded PGlite is one session, so there the two runs share its one connection.
  const first = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolMax: 2, log });
  const second = database.databaseUrl ? await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolMax: 2, log }) : first;
  try {
    const results = await Promise.all([runMigrations(first.sequelize, log), runMigrations(second.sequelize, log), runMigrations(second.sequelize, log)]);
    t.deepEqual(results.flat().sort(), [...migrationNames].sort(), 'every migration applied by exactly one run');
    const rows = await first.sequelize.query<{ name: string; count: string }>(
      'SELECT name, count(*) AS count FROM svc_migrations GROUP BY name ORDER BY name',
      { type: QueryTypes.SELECT },
    );
    t.deepEqual(
      rows.map((row) => [row.name, Number(row.count)]),
      migrationNames.map((name) => [name, 1]),
    );
  } finally {
    if (second !== first) await second.close();
    await first.close();
  }
});
