import { createServer as createTcpServer, connect, type Server, type Socket } from 'node:net';
import test from 'ava';
import { createClient } from '@svc/client';
import { createServer, loadConfig, type SvcServer } from '@svc/server';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { waitUntil } from '@svc/testing/wait-until';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { createLogger } from '../src/observability/logger.ts';

/**
 * The database going away under a running server: calls that need it answer 503
 * `database_unavailable`, retryable, with `Retry-After`, never 500 `internal_error`; and they are
 * served again once it is back. The server reaches its database (PostgreSQL when
 * TEST_DATABASE_URL is set, else the embedded PGlite) through a TCP relay this test closes and
 * reopens, so the outage is a real one for the server's driver and pool (connections cut, new
 * ones refused) while the database itself, shared with other test files, keeps running.
 */
let database: TestDatabase;
let svc: SvcServer;
let baseUrl: string;
let relay: DatabaseRelay;

/** A TCP relay in front of the database: `cut()` drops every connection and refuses new ones (the port closes); `restore()` listens on the same port again. */
class DatabaseRelay {
  readonly #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  port = 0;

  constructor(target: { host: string; port: number }) {
    this.#target = target;
  }

  async restore(): Promise<void> {
    if (this.#server) return;
    const server = createTcpServer((inbound) => {
      const outbound = connect(this.#target.port, this.#target.host);
      for (const socket of [inbound, outbound]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {
          inbound.destroy();
          outbound.destroy();
        });
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

test.before(async () => {
  database = await createTestDatabase();
  const log = createLogger(process.env.SVC_TEST_LOG_LEVEL ?? 'silent');
  // Embedded: the test starts PGlite itself and hands the server its URL through the relay, so
  // the server still runs its embedded path (one connection) and closes the database at the end.
  const embedded = database.databaseUrl ? undefined : await startEmbeddedDatabase(database.dataDir, log, { migratedTemplate: false });
  const target = new URL(database.databaseUrl ?? embedded!.url);
  relay = new DatabaseRelay({ host: target.hostname, port: Number(target.port) });
  await relay.restore();
  const relayed = new URL(target);
  relayed.host = `127.0.0.1:${relay.port}`;
  const config = loadConfig({
    SVC_HOST: '127.0.0.1',
    SVC_PORT: '0',
    SVC_DATA_DIR: database.dataDir,
    ...(database.databaseUrl ? { DATABASE_URL: relayed.toString() } : {}),
    SVC_LOG_LEVEL: process.env.SVC_TEST_LOG_LEVEL ?? 'silent',
    SVC_VALIDATE_RESPONSES: 'true',
    SVC_SHUTDOWN_TIMEOUT_MS: '2000',
  });
  svc = await createServer(config, {
    logger: log,
    ...(embedded ? { embeddedDatabase: Promise.resolve({ ...embedded, url: relayed.toString() }) } : {}),
  });
  ({ baseUrl } = await svc.listen());
});
test.after.always(async () => {
  await relay?.restore().catch(() => {});
  await svc?.close();
  await relay?.cut();
  await database?.drop();
});

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { code?: string; retryable?: boolean; retry_after_seconds?: number };
}

async function call(path: string, token: string, init: RequestInit = {}): Promise<Answer> {
  // A deadline of its own: a call that hangs on a pool waiting for a database gone is a failure too.
  const response = await fetch(`${baseUrl}${path}`, {
    ...init,
    signal: AbortSignal.timeout(20_000),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Answer['body'] };
}

test('with the database gone, calls that need it are 503 database_unavailable, retryable, with Retry-After; served again once it is back', async (t) => {
  const client = createClient({ baseUrl, retry: 0 });
  const session = await client.oauth.login({ clientName: 'outage agent' });
  const agent = createClient({ baseUrl, retry: 0, token: session.accessToken });
  const key = await agent.credentials.create({ body: { name: 'outage key', scopes: ['jobs:read', 'models:read'] } });
  const calls: Array<[string, string, RequestInit?]> = [
    ['a developer key lists its jobs', '/v1/jobs', {}],
    ['an agent lists its keys', '/v1/developer/credentials', {}],
    ['an agent creates a key', '/v1/developer/credentials', { method: 'POST', body: JSON.stringify({ name: 'during the outage', scopes: ['models:read'] }) }],
    ['the operator lists jobs', '/v1/jobs', {}],
  ];
  const tokenFor = (index: number) => (index === 0 ? key.secret : index === 3 ? svc.operatorToken : session.accessToken);
  for (const [index, [what, path, init]] of calls.entries()) t.true((await call(path, tokenFor(index), init)).status < 300, `${what}, before`);

  await relay.cut();
  for (const [index, [what, path, init]] of calls.entries()) {
    const started = performance.now();
    const answer = await call(path, tokenFor(index), init).catch((error: Error): Answer => ({ status: 0, retryAfter: null, body: { code: error.message } }));
    t.log(what, answer.status, answer.body.code, `${Math.round(performance.now() - started)} ms`);
    t.is(answer.status, 503, `${what}: ${JSON.stringify(answer.body)}`);
    t.is(answer.body.code, 'database_unavailable', what);
    t.is(answer.body.retryable, true, what);
    t.truthy(answer.retryAfter, what);
    t.is(Number(answer.retryAfter), answer.body.retry_after_seconds ?? -1, what);
  }

  await relay.restore();
  for (const [index, [what, path, init]] of calls.entries()) {
    let last = '';
    const back = await waitUntil(
      () => `${what}, after (last: ${last})`,
      async () => {
        const answer = await call(path, tokenFor(index), init);
        last = `${answer.status} ${JSON.stringify(answer.body)}`;
        return answer.status < 300 && answer;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    t.true(back.status < 300, what);
  }
});
