/**
 * Blackboard bench: put and get requests/s through the full svc stack (contract adapter,
 * validation, admission windows, screening, ordering lock, Sequelize) against a plain Koa +
 * raw pg server doing the bare insert and select, in the same process and run, alternating
 * rounds; then get p99 latency on a board of 100000 rows.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres pnpm bench:blackboard
 *
 * Without BENCH_DATABASE_URL (or TEST_DATABASE_URL) it runs on the embedded database.
 */
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, loadConfig } from '../packages/server/src/index.ts';
import { percentile } from './stats.ts';

// Koa and pg are the server package's dependencies; borrow them from there.
const requireFromServer = createRequire(new URL('../packages/server/package.json', import.meta.url));
const Koa = requireFromServer('koa') as typeof import('../packages/server/node_modules/@types/koa/index.d.ts');
const pg = requireFromServer('pg') as typeof import('../packages/server/node_modules/@types/pg/index.d.ts');

const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const BOARD_ROWS = Number(process.env.BENCH_BOARD_ROWS ?? 100_000);
const CHANNELS = 1_000;
const out = (line: string) => process.stdout.write(`${line}\n`);

async function benchDatabase(): Promise<{ url: string | undefined; dataDir: string; drop(): Promise<void> }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-'));
  const admin = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!admin) return { url: undefined, dataDir, drop: () => rm(dataDir, { recursive: true, force: true }) };
  const name = `svc_bench_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dataDir,
    async drop() {
      const dropper = new pg.Client({ connectionString: admin });
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await dropper.end();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The baseline: the same two operations with nothing but Koa, JSON and one SQL statement each. */
async function startBaseline(connectionString: string): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString, max: 10 });
  await pool.query(`CREATE TABLE IF NOT EXISTS bench_items (id text PRIMARY KEY, key text NOT NULL, item jsonb NOT NULL, created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp())`);
  await pool.query('CREATE INDEX IF NOT EXISTS bench_items_key ON bench_items (key, created_at DESC, id DESC)');
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.method === 'POST' && ctx.path === '/put') {
      const chunks: Buffer[] = [];
      for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { key: string; value: { text: string } };
      if (typeof body.key !== 'string' || typeof body.value?.text !== 'string') ctx.throw(422);
      const id = `bb_${randomBytes(12).toString('hex')}`;
      const { rows } = await pool.query('INSERT INTO bench_items (id, key, item) VALUES ($1, $2, $3) RETURNING id, key, created_at', [id, body.key, JSON.stringify(body.value)]);
      ctx.status = 201;
      ctx.type = 'application/json';
      ctx.body = JSON.stringify({ ...rows[0], edit_token: randomBytes(24).toString('base64url') });
      return;
    }
    if (ctx.method === 'GET' && ctx.path === '/get') {
      const { rows } = await pool.query('SELECT id, key, item, created_at FROM bench_items WHERE key = $1 ORDER BY created_at DESC, id DESC LIMIT $2', [ctx.query.key, Number(ctx.query.limit ?? 50) + 1]);
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

/** Requests completed per second by CONCURRENCY workers over ROUND_SECONDS; non-2xx answers abort the bench. */
async function throughput(request: (index: number) => Promise<Response>, concurrency = CONCURRENCY): Promise<number> {
  const deadline = performance.now() + ROUND_SECONDS * 1000;
  let done = 0;
  let counter = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const response = await request(counter++);
        if (!response.ok) throw new Error(`bench request failed: ${response.status} ${await response.text()}`);
        await response.arrayBuffer();
        done += 1;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

const putRequest = (base: string, pathName: string) => (index: number) =>
  fetch(`${base}${pathName}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: `bench:${index % CHANNELS}`, value: { text: `bench post ${index}: a short result note`, kind: 'note' } }) });
const getRequest = (base: string, pathName: string) => (index: number) => fetch(`${base}${pathName}?key=bench:${index % CHANNELS}&limit=50`);

async function main() {
  const database = await benchDatabase();
  const lifted = String(Number.MAX_SAFE_INTEGER);
  const config = loadConfig({
    SVC_HOST: '127.0.0.1',
    SVC_PORT: '0',
    SVC_DATA_DIR: database.dataDir,
    DATABASE_URL: database.url,
    SVC_LOG_LEVEL: 'silent',
    SVC_BLACKBOARD_IP_PUTS_PER_HOUR: lifted,
    SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR: lifted,
    SVC_BLACKBOARD_GLOBAL_BYTES_PER_HOUR: lifted,
    SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR: lifted,
    SVC_BLACKBOARD_PRINCIPAL_BYTES_PER_HOUR: lifted,
    SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: lifted,
    SVC_BLACKBOARD_CHANNEL_BYTES_PER_HOUR: lifted,
  });
  const svc = await createServer(config);
  const { apiUrl } = await svc.listen();
  // The baseline shares the database (its own table) so both pay the same storage. The embedded
  // database is one session, so a second pool cannot share it: ratios need PostgreSQL.
  const baseline = database.url ? await startBaseline(database.url) : undefined;
  try {
    out(`blackboard bench on ${svc.database.kind}; ${CONCURRENCY} concurrent clients (and 1 for put), ${ROUNDS} x ${ROUND_SECONDS} s rounds per side`);
    const results: Record<string, { svc: number[]; baseline: number[] }> = { put: { svc: [], baseline: [] }, 'put, 1 client': { svc: [], baseline: [] }, get: { svc: [], baseline: [] } };
    for (let round = 0; round < ROUNDS; round++) {
      // Puts serialise on the put-order and global admission rows for the length of one
      // statement (overlapping puts commit asynchronously, then share a WAL flush; a lone put
      // commits synchronously); one client shows the per-request overhead alone.
      if (baseline) results['put, 1 client']!.baseline.push(await throughput(putRequest(baseline.url, '/put'), 1));
      results['put, 1 client']!.svc.push(await throughput(putRequest(apiUrl, '/api/v1/blackboard/put'), 1));
      if (baseline) results.put!.baseline.push(await throughput(putRequest(baseline.url, '/put')));
      results.put!.svc.push(await throughput(putRequest(apiUrl, '/api/v1/blackboard/put')));
      if (process.env.BENCH_ONLY === 'put') continue;
      if (baseline) results.get!.baseline.push(await throughput(getRequest(baseline.url, '/get')));
      results.get!.svc.push(await throughput(getRequest(apiUrl, '/api/v1/blackboard/get')));
    }
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    for (const [operation, { svc: ours, baseline: theirs }] of Object.entries(results)) {
      if (!baseline) {
        if (ours.length === 0) continue;
        out(`${operation}: svc ${mean(ours).toFixed(0)} req/s (no baseline on the embedded database; set BENCH_DATABASE_URL for ratios)`);
        continue;
      }
      if (ours.length === 0) continue;
      out(`${operation}: svc ${mean(ours).toFixed(0)} req/s, baseline ${mean(theirs).toFixed(0)} req/s, ratio ${(mean(ours) / mean(theirs)).toFixed(2)}${operation.startsWith('put') ? ' (target >= 0.5)' : ''}`);
    }

    if (process.env.BENCH_ONLY === 'put') return;
    // A full board: fill to BOARD_ROWS in one statement, then time single gets.
    const [{ n: existing }] = (await svc.database.sequelize.query('SELECT count(*)::int AS n FROM blackboard_items', { type: 'SELECT' as never })) as unknown as [{ n: number }];
    const missing = Math.max(0, BOARD_ROWS - existing);
    await svc.database.sequelize.query(
      `INSERT INTO blackboard_items (id, key, task, kind, topics, text, item, value_bytes, key_id, request_hash, edit_token_hash, created_at, expires_at)
       SELECT 'bb_' || substr(md5(random()::text || g::text), 1, 24), 'bench:' || (g % ${CHANNELS}), NULL, 'note', '{}', 'filler ' || g,
         jsonb_build_object('text', 'filler ' || g, 'kind', 'note', 'coprocessor', jsonb_build_object('coverage', jsonb_build_object('schema', 'svc.blackboard.screen.v1', 'scope', 'item', 'status', 'complete', 'reasons', '[]'::jsonb), 'action', 'allow', 'findings', '[]'::jsonb)),
         40, 'kid_bench', 'x', 'x', now() - make_interval(secs => g / 1000.0), now() + interval '30 days'
       FROM generate_series(1, ${missing}) AS g`,
    );
    await svc.database.sequelize.query('ANALYZE blackboard_items');
    const latencies: number[] = [];
    const samples = Number(process.env.BENCH_P99_SAMPLES ?? 2_000);
    for (let index = 0; index < 200; index++) await (await fetch(`${apiUrl}/api/v1/blackboard/get?key=bench:${index % CHANNELS}&limit=50`)).arrayBuffer();
    for (let index = 0; index < samples; index++) {
      const started = performance.now();
      const response = await fetch(`${apiUrl}/api/v1/blackboard/get?key=bench:${(index * 7919) % CHANNELS}&limit=50`);
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
    }
    latencies.sort((a, b) => a - b);
    out(`get on a ${BOARD_ROWS}-row board (${samples} sequential requests, limit 50): p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms (target p99 < 20 ms on PostgreSQL)`);
  } finally {
    await baseline?.close();
    await svc.close();
    await database.drop();
  }
}

await main();
