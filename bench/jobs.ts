/**
 * Jobs bench: jobs/s end to end (submit to completed, calculate items) with one `svc-server`
 * process and with two sharing one PostgreSQL queue (the ratio is two over one, measured in the
 * same run), and the median time from submit to running on an idle queue (target: under 50 ms),
 * read from the job's own `created_at` and `started_at` (both the database's clock).
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres pnpm bench:jobs
 *
 * Needs PostgreSQL (two processes cannot share the embedded database). The operator submits
 * everything, so the per-principal caps are raised to the global ones for the run; the global
 * caps stay the spec's (32 jobs, 256 items). BENCH_JOBS (default 200) jobs of BENCH_ITEMS
 * (default 4) items per side in each of BENCH_ROUNDS (default 4) alternating pairs, BENCH_CONCURRENCY (default 16) submitters, BENCH_IDLE_JOBS
 * (default 40) sequential jobs for the idle latency.
 */
import { createTestDatabase } from '../packages/server/test/helpers/test-database.ts';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type SvcClient } from '../packages/client/src/index.ts';
import { startServerProcess, type ServerProcess } from '../packages/server/test/helpers/server-process.ts';
import { reportFigures } from './report.ts';
import { median, percentile } from './stats.ts';


const JOBS = Number(process.env.BENCH_JOBS ?? 200);
const ITEMS = Number(process.env.BENCH_ITEMS ?? 4);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const IDLE_JOBS = Number(process.env.BENCH_IDLE_JOBS ?? 40);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const TOKEN = `bench-operator-${randomBytes(12).toString('hex')}`;
const out = (line: string) => process.stdout.write(`${line}\n`);


const request = (index: number) => ({
  schema: 'svc.batch-job-request.v1' as const,
  operation: 'calculate' as const,
  items: Array.from({ length: ITEMS }, (_, item) => ({ expression: `sqrt(${index} + ${item}) * 2^3` })),
});

/** Submits `count` jobs over the servers (round robin), retrying a 429 with the same key, and waits until all completed. */
async function throughput(clients: SvcClient[], count: number, run: string): Promise<number> {
  const started = performance.now();
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const index = next++;
        const key = `${run}-${index}`;
        for (;;) {
          try {
            ids.push((await clients[index % clients.length]!.jobs.submit(request(index), { idempotencyKey: key })).job_id);
            break;
          } catch (error) {
            if ((error as { status?: number }).status !== 429) throw error;
            await sleep(50); // a refused submitter backs off instead of hammering the admission lock
          }
        }
      }
    }),
  );
  for (const id of ids) {
    const job = await clients[0]!.jobs.wait(id, { intervalMs: 5, maxIntervalMs: 50 });
    if (job.status !== 'completed') throw new Error(`job ${id} ended ${job.status}`);
  }
  return count / ((performance.now() - started) / 1000);
}

async function idleLatency(client: SvcClient): Promise<number[]> {
  const latencies: number[] = [];
  for (let index = 0; index < IDLE_JOBS; index += 1) {
    const job = await client.jobs.submit(request(index));
    const done = await client.jobs.wait(job.job_id, { intervalMs: 5, maxIntervalMs: 20 });
    latencies.push(Date.parse(done.started_at!) - Date.parse(done.created_at));
  }
  return latencies;
}

async function main(): Promise<void> {
  const admin = process.env.BENCH_DATABASE_URL;
  if (!admin) throw new Error('Set BENCH_DATABASE_URL to a PostgreSQL server (two svc-server processes must share its queue).');
  const database = await createTestDatabase({ adminUrl: admin, prefix: 'svc_bench_jobs' });
  const servers: ServerProcess[] = [];
  try {
    const env = {
      SVC_OPERATOR_TOKEN: TOKEN,
      SVC_JOBS_MAX_ACTIVE_PER_PRINCIPAL: '32',
      SVC_JOBS_MAX_ACTIVE_ITEMS_PER_PRINCIPAL: '256',
      SVC_JOBS_MAX_RETAINED_PER_PRINCIPAL: String(JOBS * 2 * ROUNDS + 100 + IDLE_JOBS),
      SVC_JOBS_MAX_RETAINED_GLOBAL: String(JOBS * 2 * ROUNDS + 100 + IDLE_JOBS),
    };
    servers.push(await startServerProcess(database, env, { deadlineMs: 3_600_000 }));
    const one = createClient({ baseUrl: servers[0]!.baseUrl, token: TOKEN, retry: 0 });
    out(`jobs bench: ${JOBS} jobs of ${ITEMS} calculate items, ${CONCURRENCY} submitters, PostgreSQL`);
    const idle = await idleLatency(one);
    out(`submit -> running on an idle queue: median ${median(idle).toFixed(1)} ms, p90 ${percentile(idle, 90).toFixed(1)} ms (target < 50 ms)`);
    servers.push(await startServerProcess(database, env, { deadlineMs: 3_600_000 }));
    const two = createClient({ baseUrl: servers[1]!.baseUrl, token: TOKEN, retry: 0 });
    await throughput([one], Math.min(50, JOBS), 'warm-one');
    await throughput([one, two], Math.min(50, JOBS), 'warm-two');
    // Alternating pairs (the order flips each round) on the same queue: one ratio per pair, so
    // load on the machine moves both sides of a pair, and the median of the pairs is reported.
    const singles: number[] = [];
    const doubles: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? (['one', 'two'] as const) : (['two', 'one'] as const);
      const rates: Partial<Record<'one' | 'two', number>> = {};
      for (const side of order) rates[side] = await throughput(side === 'one' ? [one] : [one, two], JOBS, `${side}-${round}`);
      singles.push(rates.one!);
      doubles.push(rates.two!);
      ratios.push(rates.two! / rates.one!);
      out(`  round ${round + 1}: 1 server ${rates.one!.toFixed(1)} jobs/s | 2 servers ${rates.two!.toFixed(1)} jobs/s | ratio ${(rates.two! / rates.one!).toFixed(2)}`);
    }
    const ratio = median(ratios);
    out(`1 server : ${median(singles).toFixed(1)} jobs/s (${(median(singles) * ITEMS).toFixed(0)} items/s), median of ${ROUNDS} rounds`);
    out(`2 servers: ${median(doubles).toFixed(1)} jobs/s (${(median(doubles) * ITEMS).toFixed(0)} items/s), ratio ${ratio.toFixed(2)}x of 1 server (median of pairs)`);
    reportFigures('jobs', [
      { figure: 'jobs/s, 2 servers vs 1 on one queue', svc: median(doubles), baseline: median(singles), unit: 'jobs/s', ratio, target: { on: 'ratio', op: '>=', value: 1 }, note: `${JOBS} jobs of ${ITEMS} calculate items per side and round, ${CONCURRENCY} submitters; target: two servers do more than one` },
      { figure: 'submit to running, idle queue (median)', svc: median(idle), unit: 'ms', target: { on: 'svc', op: '<', value: 50 }, note: `p90 ${percentile(idle, 90).toFixed(1)} ms over ${IDLE_JOBS} sequential jobs` },
    ]);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await database.drop();
  }
}

await main();
