/**
 * Blackboard bench: put and get requests/s through the full svc stack (contract adapter,
 * validation, admission windows, screening, put ordering, durable commit) against a plain Koa +
 * raw pg server doing the bare insert and select on the same database; then get p99 latency on a
 * board of 100000 rows.
 *
 * Each server runs in its own worker thread and autocannon drives them from the main thread, as
 * in bench/http-overhead: a server never shares its event loop with the load generator (which
 * would charge the client's work to whichever server is slower). Rounds alternate between the
 * two servers, the order flipping each pair; the reported ratio is the median of the per-pair
 * ratios, so a burst of noise on this 2-core machine hits both sides of one pair, not the result.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres pnpm bench:blackboard
 *
 * Ratios need PostgreSQL (the embedded database is one session: a second pool cannot share it).
 * BENCH_ROUNDS (default 6) pairs of BENCH_ROUND_SECONDS (default 2) per operation;
 * BENCH_ONLY=put skips the get measurements.
 */
import { createTestDatabase } from '../packages/server/test/helpers/test-database.ts';
import { createRequire } from 'node:module';
import path from 'node:path';
import autocannon from 'autocannon';
import { median, percentile } from './stats.ts';
import { startWorkerServer, type WorkerServer } from './worker-server.ts';

const requireFromServer = createRequire(new URL('../packages/server/package.json', import.meta.url));
const pg = requireFromServer('pg') as typeof import('../packages/server/node_modules/@types/pg/index.d.ts');

const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const BOARD_ROWS = Number(process.env.BENCH_BOARD_ROWS ?? 100_000);
const CHANNELS = 1_000;
const out = (line: string) => process.stdout.write(`${line}\n`);


interface Round {
  perSecond: number;
  cpuPerRequest: number;
}

/** One round against one server: requests/s, and the server thread's CPU µs per request. */
async function measure(server: WorkerServer, operation: 'put' | 'get', connections: number): Promise<Round> {
  let counter = 0;
  const base = new URL(server.url);
  const prefix = base.pathname.replace(/\/$/, '');
  const request: autocannon.Request =
    operation === 'put'
      ? {
          method: 'POST',
          path: `${prefix}/put`,
          headers: { 'content-type': 'application/json' },
          setupRequest: (request) => {
            const index = counter++;
            return { ...request, body: JSON.stringify({ key: `bench:${index % CHANNELS}`, value: { text: `bench post ${index}: a short result note`, kind: 'note' } }) };
          },
        }
      : { method: 'GET', setupRequest: (request) => ({ ...request, path: `${prefix}/get?key=bench:${counter++ % CHANNELS}&limit=50` }) };
  const cpuBefore = await server.cpuMicros();
  const result = await autocannon({ url: base.origin, connections, duration: ROUND_SECONDS, requests: [request] });
  const cpuAfter = await server.cpuMicros();
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.url} ${operation}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { perSecond: result.requests.total / ROUND_SECONDS, cpuPerRequest: (cpuAfter - cpuBefore) / Math.max(1, result.requests.total) };
}

/** Alternating pairs (the order flips each pair); answers the per-pair ratios svc/baseline. */
async function compare(svc: WorkerServer, baseline: WorkerServer, operation: 'put' | 'get', connections: number, label: string): Promise<void> {
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  const rows: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const svcFirst = round % 2 === 1;
    const first = await measure(svcFirst ? svc : baseline, operation, connections);
    const second = await measure(svcFirst ? baseline : svc, operation, connections);
    const [ours, theirs] = svcFirst ? [first, second] : [second, first];
    ratios.push(ours.perSecond / theirs.perSecond);
    cpuRatios.push(theirs.cpuPerRequest / ours.cpuPerRequest);
    rows.push(`    pair ${round + 1}: svc ${ours.perSecond.toFixed(0)} req/s (${ours.cpuPerRequest.toFixed(0)} µs server CPU/req), baseline ${theirs.perSecond.toFixed(0)} req/s (${theirs.cpuPerRequest.toFixed(0)} µs)`);
  }
  out(`${label}:`);
  for (const row of rows) out(row);
  out(`  ratio svc/baseline (median of pairs): ${median(ratios).toFixed(2)}${operation === 'put' ? ' (target >= 0.5)' : ''}; server-thread CPU per request baseline/svc: ${median(cpuRatios).toFixed(2)}`);
}

async function main() {
  const admin = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!admin) {
    out('blackboard bench: set BENCH_DATABASE_URL (PostgreSQL) for the ratios; the embedded database is one session.');
    process.exitCode = 1;
    return;
  }
  // A fresh PostgreSQL database for this run (ratios need a database both servers can share), dropped at the end.
  const database = await createTestDatabase({ adminUrl: admin, prefix: 'svc_bench' });
  const databaseUrl = database.databaseUrl!;
  const svc = await startWorkerServer(new URL('./blackboard-servers.ts', import.meta.url), { kind: 'svc', databaseUrl, dataDir: database.dataDir });
  const baseline = await startWorkerServer(new URL('./blackboard-servers.ts', import.meta.url), { kind: 'baseline', databaseUrl, dataDir: database.dataDir });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    out(`blackboard bench on PostgreSQL; ${ROUNDS} alternating pairs of ${ROUND_SECONDS} s rounds per measurement`);
    // Warm both paths (JIT, prepared statements, pools) before measuring.
    for (const server of [svc, baseline]) await measure(server, 'put', CONCURRENCY);
    // Puts serialise on the put-order and global admission rows for the length of one statement
    // (overlapping puts commit asynchronously, then share a WAL flush; a lone put commits
    // synchronously); one client shows the per-request overhead alone.
    await compare(svc, baseline, 'put', CONCURRENCY, `put, ${CONCURRENCY} connections`);
    await compare(svc, baseline, 'put', 1, 'put, 1 connection');
    if (process.env.BENCH_ONLY === 'put') return;
    await compare(svc, baseline, 'get', CONCURRENCY, `get, ${CONCURRENCY} connections`);

    // A full board: fill to BOARD_ROWS in one statement, then time single gets.
    const { rows: [{ n: existing }] } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM blackboard_items');
    const missing = Math.max(0, BOARD_ROWS - existing);
    await pool.query(
      `INSERT INTO blackboard_items (id, key, task, kind, topics, text, item, value_bytes, key_id, request_hash, edit_token_hash, created_at, expires_at)
       SELECT 'bb_' || substr(md5(random()::text || g::text), 1, 24), 'bench:' || (g % ${CHANNELS}), NULL, 'note', '{}', 'filler ' || g,
         jsonb_build_object('text', 'filler ' || g, 'kind', 'note', 'coprocessor', jsonb_build_object('coverage', jsonb_build_object('schema', 'svc.blackboard.screen.v1', 'scope', 'item', 'status', 'complete', 'reasons', '[]'::jsonb), 'action', 'allow', 'findings', '[]'::jsonb)),
         40, 'kid_bench', 'x', 'x', now() - make_interval(secs => g / 1000.0), now() + interval '30 days'
       FROM generate_series(1, ${missing}) AS g`,
    );
    await pool.query('ANALYZE blackboard_items');
    const latencies: number[] = [];
    const samples = Number(process.env.BENCH_P99_SAMPLES ?? 2_000);
    for (let index = 0; index < 200; index++) await (await fetch(`${svc.url}/get?key=bench:${index % CHANNELS}&limit=50`)).arrayBuffer();
    for (let index = 0; index < samples; index++) {
      const started = performance.now();
      const response = await fetch(`${svc.url}/get?key=bench:${(index * 7919) % CHANNELS}&limit=50`);
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
    }
    out(`get on a ${BOARD_ROWS}-row board (${samples} sequential requests, limit 50): p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms (target p99 < 20 ms on PostgreSQL)`);
  } finally {
    await pool.end();
    await baseline.close();
    await svc.close();
    await database.drop();
  }
}

await main();
