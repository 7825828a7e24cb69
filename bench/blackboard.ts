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
 * BENCH_ONLY=put skips the get measurements, BENCH_ONLY=get the put ones (to iterate on reads);
 * BENCH_SKIP_P99=1 skips the 100000-row board; BENCH_PROFILE_DIR=<dir> writes a CPU profile of
 * each server's thread over the get rounds (svc-get.cpuprofile, baseline-get.cpuprofile).
 *
 * Before the gets, both servers' tables are topped up to GET_ROWS_PER_CHANNEL rows in every
 * channel (each row shaped as that server's puts store it), so both answer full pages of 50 with
 * more behind, however many puts the put rounds managed.
 */
import { createTestDatabase } from '@svc/testing/test-database';
import { createRequire } from 'node:module';
import path from 'node:path';
import autocannon from 'autocannon';
import { reportFigures, type Figure } from './report.ts';
import { median, percentile } from './stats.ts';
import { startWorkerServer, type WorkerServer } from './worker-server.ts';

const requireFromServer = createRequire(new URL('../packages/server/package.json', import.meta.url));
const pg = requireFromServer('pg') as typeof import('../packages/server/node_modules/@types/pg/index.d.ts');

const ROUND_SECONDS = Number(process.env.BENCH_ROUND_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const BOARD_ROWS = Number(process.env.BENCH_BOARD_ROWS ?? 100_000);
const CHANNELS = 1_000;
const GET_ROWS_PER_CHANNEL = 60;
const ONLY = process.env.BENCH_ONLY;
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
            return {
              ...request,
              body: JSON.stringify({ key: `bench:${index % CHANNELS}`, value: { text: `bench post ${index}: a short result note`, kind: 'note' } }),
            };
          },
        }
      : { method: 'GET', setupRequest: (request) => ({ ...request, path: `${prefix}/get?key=bench:${counter++ % CHANNELS}&limit=50` }) };
  const cpuBefore = await server.cpuMicros();
  const result = await autocannon({ url: base.origin, connections, duration: ROUND_SECONDS, requests: [request] });
  const cpuAfter = await server.cpuMicros();
  if (result.non2xx > 0 || result.errors > 0) {
    const statuses = Object.entries(result.statusCodeStats ?? {})
      .map(([status, { count }]) => `${count} x ${status}`)
      .join(', ');
    throw new Error(`${server.url} ${operation}, ${connections} connection(s): ${result.non2xx} non-2xx answers (${statuses}), ${result.errors} errors`);
  }
  return { perSecond: result.requests.total / ROUND_SECONDS, cpuPerRequest: (cpuAfter - cpuBefore) / Math.max(1, result.requests.total) };
}

/**
 * Alternating pairs (the order flips each pair); prints each pair and answers the figure: the
 * median of per-pair ratios svc/baseline, with the CPU per request of both in the note.
 */
async function compare(svc: WorkerServer, baseline: WorkerServer, operation: 'put' | 'get', connections: number, targetRatio: number): Promise<Figure> {
  const label = `${operation}, ${connections} connection${connections === 1 ? '' : 's'}`;
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  const pairs: Array<{ ours: Round; theirs: Round }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const svcFirst = round % 2 === 1;
    const first = await measure(svcFirst ? svc : baseline, operation, connections);
    const second = await measure(svcFirst ? baseline : svc, operation, connections);
    const [ours, theirs] = svcFirst ? [first, second] : [second, first];
    ratios.push(ours.perSecond / theirs.perSecond);
    cpuRatios.push(theirs.cpuPerRequest / ours.cpuPerRequest);
    pairs.push({ ours, theirs });
  }
  out(`${label}:`);
  pairs.forEach(({ ours, theirs }, index) =>
    out(
      `    pair ${index + 1}: svc ${ours.perSecond.toFixed(0)} req/s (${ours.cpuPerRequest.toFixed(0)} µs server CPU/req), baseline ${theirs.perSecond.toFixed(0)} req/s (${theirs.cpuPerRequest.toFixed(0)} µs)`,
    ),
  );
  const ratio = median(ratios);
  const cpuRatio = median(cpuRatios);
  const cpu = (side: 'ours' | 'theirs') => median(pairs.map((pair) => pair[side].cpuPerRequest)).toFixed(0);
  out(
    `  ratio svc/baseline (median of pairs): ${ratio.toFixed(2)} (target >= ${targetRatio}); server-thread CPU per request baseline/svc: ${cpuRatio.toFixed(2)}`,
  );
  return {
    figure: label,
    svc: median(pairs.map((pair) => pair.ours.perSecond)),
    baseline: median(pairs.map((pair) => pair.theirs.perSecond)),
    unit: 'req/s',
    ratio,
    target: { on: 'ratio', op: '>=', value: targetRatio },
    note: `server CPU per request: svc ${cpu('ours')} µs, baseline ${cpu('theirs')} µs (baseline/svc ${cpuRatio.toFixed(2)}); ${ROUNDS} pairs of ${ROUND_SECONDS} s`,
  };
}

/**
 * Tops both tables up to `perChannel` rows in every bench channel, older than anything the puts
 * wrote, each row shaped as that server's own put stores it (svc: the item with its screening
 * annotation; the baseline: the value as posted).
 */
async function seedChannels(pool: InstanceType<typeof pg.Pool>, perChannel: number): Promise<void> {
  const missing = (table: string) =>
    `SELECT c, ${perChannel} - count(t.key)::int AS n FROM generate_series(0, ${CHANNELS - 1}) AS c LEFT JOIN ${table} t ON t.key = 'bench:' || c GROUP BY c`;
  const text = `'seed post ' || g || ': a short result note'`;
  const id = `'bb_' || substr(md5(random()::text || c::text || '/' || g::text), 1, 24)`;
  await pool.query(
    `INSERT INTO blackboard_items (id, key, task, kind, topics, text, item, value_bytes, key_id, request_hash, edit_token_hash, created_at, expires_at)
     SELECT ${id}, 'bench:' || c, NULL, 'note', '{}', ${text},
       jsonb_build_object('text', ${text}, 'kind', 'note', 'coprocessor', jsonb_build_object('coverage', jsonb_build_object('schema', 'svc.blackboard.screen.v1', 'scope', 'item', 'status', 'complete', 'reasons', '[]'::jsonb), 'action', 'allow', 'findings', '[]'::jsonb)),
       40, 'kid_bench', 'x', 'x', now() - interval '1 hour' - make_interval(secs => g), now() + interval '30 days'
     FROM (${missing('blackboard_items')}) AS m, generate_series(1, m.n) AS g`,
  );
  await pool.query(
    `INSERT INTO bench_items (id, key, item, created_at)
     SELECT ${id}, 'bench:' || c, jsonb_build_object('text', ${text}, 'kind', 'note'), now() - interval '1 hour' - make_interval(secs => g)
     FROM (${missing('bench_items')}) AS m, generate_series(1, m.n) AS g`,
  );
  await pool.query('ANALYZE blackboard_items');
  await pool.query('ANALYZE bench_items');
}

/** Fills the board to BOARD_ROWS in one statement, then times single gets, one at a time. */
async function boardLatency(pool: InstanceType<typeof pg.Pool>, svc: WorkerServer): Promise<Figure> {
  const {
    rows: [{ n: existing }],
  } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM blackboard_items');
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
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  out(
    `get on a ${BOARD_ROWS}-row board (${samples} sequential requests, limit 50): p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target p99 < 20 ms on PostgreSQL)`,
  );
  return {
    figure: `get p99, ${BOARD_ROWS}-row board`,
    svc: p99,
    unit: 'ms',
    target: { on: 'svc', op: '<', value: 20 },
    note: `p50 ${p50.toFixed(1)} ms; ${samples} sequential gets, limit 50`,
  };
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
    const figures: Figure[] = [];
    if (ONLY !== 'get') {
      // Puts serialise on the put-order and global admission rows for the length of one statement
      // (overlapping puts commit asynchronously, then share a WAL flush; a lone put commits
      // synchronously); one client shows the per-request overhead alone.
      figures.push(await compare(svc, baseline, 'put', CONCURRENCY, 0.5));
      figures.push(await compare(svc, baseline, 'put', 1, 0.5));
    }
    if (ONLY !== 'put') {
      await seedChannels(pool, GET_ROWS_PER_CHANNEL);
      for (const server of [svc, baseline]) await measure(server, 'get', CONCURRENCY);
      const profileDir = process.env.BENCH_PROFILE_DIR;
      if (profileDir) for (const server of [svc, baseline]) await server.ask('profile:start', 'profiling');
      figures.push(await compare(svc, baseline, 'get', CONCURRENCY, 0.6));
      if (profileDir)
        for (const [name, server] of [
          ['svc', svc],
          ['baseline', baseline],
        ] as const)
          await server.ask(`profile:stop:${path.resolve(profileDir, `${name}-get.cpuprofile`)}`, 'profiled');
      if (!process.env.BENCH_SKIP_P99) figures.push(await boardLatency(pool, svc));
    }
    reportFigures('blackboard', figures);
  } finally {
    await pool.end();
    await baseline.close();
    await svc.close();
    await database.drop();
  }
}

await main();
