/**
 * The two servers of bench/blackboard, each run in its own worker thread so neither shares an
 * event loop with the load generator (autocannon, in the main thread) and the bench can read the
 * CPU time each server's thread spent (process.threadCpuUsage).
 * - `svc`: the full server (contract adapter, validation, admission windows, screening, put
 *   ordering, durable commit), its admission caps lifted so the bench measures cost, not refusals.
 * - `baseline`: plain Koa + raw pg doing the bare insert and select, on the same database.
 */
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { answerBenchMessages, startSvcInThread } from './svc-servers.ts';
import { LIFTED_BLACKBOARD_LIMITS } from './lifted-limits.ts';

// Koa and pg are the server package's dependencies; borrow them from there.
const requireFromServer = createRequire(new URL('../packages/server/package.json', import.meta.url));
const Koa = requireFromServer('koa') as typeof import('../packages/server/node_modules/@types/koa/index.d.ts');
const pg = requireFromServer('pg') as typeof import('../packages/server/node_modules/@types/pg/index.d.ts');

const { kind, databaseUrl, dataDir } = workerData as { kind: 'svc' | 'baseline'; databaseUrl: string; dataDir: string };

async function startSvc(): Promise<{ url: string; close(): Promise<void> }> {
  const { svc, apiUrl } = await startSvcInThread(dataDir, databaseUrl, {
    ...LIFTED_BLACKBOARD_LIMITS,
    // autocannon keeps sending on a connection after the answer that says `Connection: close`
    // (svc's default keep-alive limit, 1000 requests), and Node answers those with an empty
    // 503: with one connection a round passes 1000 requests. Real clients reconnect.
    SVC_HTTP_MAX_REQUESTS_PER_SOCKET: '0',
  });
  return { url: `${apiUrl}/api/v1/blackboard`, close: () => svc.close() };
}

/** The baseline: the same two operations with nothing but Koa, JSON and one SQL statement each. */
async function startBaseline(): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  await pool.query(
    `CREATE TABLE IF NOT EXISTS bench_items (id text PRIMARY KEY, key text NOT NULL, item jsonb NOT NULL, created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp())`,
  );
  await pool.query('CREATE INDEX IF NOT EXISTS bench_items_key ON bench_items (key, created_at DESC, id DESC)');
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method === 'POST' && ctx.path === '/put') {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { key: string; value: { text: string } };
      if (typeof body.key !== 'string' || typeof body.value?.text !== 'string') ctx.throw(422);
      const id = `bb_${randomBytes(12).toString('hex')}`;
      const { rows } = await pool.query('INSERT INTO bench_items (id, key, item) VALUES ($1, $2, $3) RETURNING id, key, created_at', [
        id,
        body.key,
        JSON.stringify(body.value),
      ]);
      ctx.status = 201;
      ctx.type = 'application/json';
      ctx.body = JSON.stringify({ ...rows[0], edit_token: randomBytes(24).toString('base64url') });
      return;
    }
    if (ctx.method === 'GET' && ctx.path === '/get') {
      const { rows } = await pool.query('SELECT id, key, item, created_at FROM bench_items WHERE key = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [
        ctx.query.key,
        Number(ctx.query.limit ?? 50) + 1,
      ]);
      ctx.type = 'application/json';
      ctx.body = JSON.stringify({ items: rows.slice(0, 50), has_more: rows.length > 50 });
      return;
    }
    ctx.status = 404;
  });
  const server: Server = createHttpServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    },
  };
}

const server = kind === 'svc' ? await startSvc() : await startBaseline();
parentPort!.postMessage({ url: server.url });
answerBenchMessages(parentPort!, () => server.close());
