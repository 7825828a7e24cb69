/**
 * Jobs bench: jobs/s end to end (submit to completed, calculate items) with one `svc-server`
 * process and with two sharing one PostgreSQL queue (the ratio is two over one, measured in the
 * same run), and the median time from submit to running on an idle queue (target: under 50 ms),
 * read from the job's own `created_at` and `started_at` (both the database's clock).
 *
 * Two servers on one machine add jobs/s only while the machine has idle cores: the bench prints
 * how many cores each side kept busy (the whole machine: servers, PostgreSQL, this client) and
 * jobs per CPU-second. The target is on the latter: a second server on the queue must not make
 * each job cost more (target >= 0.9x of one server), which holds on any machine; the jobs/s
 * ratio is a figure, read as scaling only where one server left cores idle.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres pnpm bench:jobs
 *
 * Needs PostgreSQL (two processes cannot share the embedded database). The operator submits
 * everything, so the per-principal caps are raised to the global ones for the run; the global
 * caps stay the spec's (32 jobs, 256 items). BENCH_JOBS (default 200) jobs of BENCH_ITEMS
 * (default 4) items per side in each of BENCH_ROUNDS (default 4) alternating pairs, BENCH_CONCURRENCY (default 16) submitters, BENCH_IDLE_JOBS
 * (default 40) sequential jobs for the idle latency.
 */
import { createTestDatabase } from '@svc/testing/test-database';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, type SvcClient } from '@svc/client';
import { startServerProcess, type ServerProcess } from '@svc/testing/server-process';
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

/** CPU time of the whole machine so far (every process: the servers, PostgreSQL, this client), in ms busy and in total. */
function machineCpu(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const { times } of cpus()) {
    busy += times.user + times.nice + times.sys + times.irq;
    total += times.user + times.nice + times.sys + times.irq + times.idle;
  }
  return { busy, total };
}

interface Throughput {
  jobsPerSecond: number;
  /** Jobs per second of busy CPU on the whole machine: what a job costs, however many servers share the queue. */
  jobsPerCpuSecond: number;
  /** How many of the machine's cores were busy on average. */
  coresBusy: number;
}

/** Submits `count` jobs over the servers (round robin), retrying a 429 with the same key, and waits until all completed. */
async function throughput(clients: SvcClient[], count: number, run: string): Promise<Throughput> {
  const started = performance.now();
  const cpuBefore = machineCpu();
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
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = machineCpu();
  const busy = cpuAfter.busy - cpuBefore.busy;
  return { jobsPerSecond: count / seconds, jobsPerCpuSecond: count / (busy / 1000), coresBusy: (busy / (cpuAfter.total - cpuBefore.total)) * cpus().length };
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
    const singles: Throughput[] = [];
    const doubles: Throughput[] = [];
    const ratios: number[] = [];
    const costRatios: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? (['one', 'two'] as const) : (['two', 'one'] as const);
      const rates: Partial<Record<'one' | 'two', Throughput>> = {};
      for (const side of order) rates[side] = await throughput(side === 'one' ? [one] : [one, two], JOBS, `${side}-${round}`);
      const single = rates.one!;
      const double = rates.two!;
      singles.push(single);
      doubles.push(double);
      ratios.push(double.jobsPerSecond / single.jobsPerSecond);
      costRatios.push(double.jobsPerCpuSecond / single.jobsPerCpuSecond);
      out(
        `  round ${round + 1}: 1 server ${single.jobsPerSecond.toFixed(1)} jobs/s (${single.coresBusy.toFixed(2)} cores busy) | 2 servers ${double.jobsPerSecond.toFixed(1)} jobs/s (${double.coresBusy.toFixed(2)} cores busy) | ratio ${(double.jobsPerSecond / single.jobsPerSecond).toFixed(2)}, per CPU-second ${(double.jobsPerCpuSecond / single.jobsPerCpuSecond).toFixed(2)}`,
      );
    }
    const of = (sides: Throughput[], key: keyof Throughput) => median(sides.map((side) => side[key]));
    const ratio = median(ratios);
    const costRatio = median(costRatios);
    const cores = cpus().length;
    const saturated = of(singles, 'coresBusy') >= 0.8 * cores;
    out(
      `1 server : ${of(singles, 'jobsPerSecond').toFixed(1)} jobs/s (${(of(singles, 'jobsPerSecond') * ITEMS).toFixed(0)} items/s), ${of(singles, 'coresBusy').toFixed(2)} of ${cores} cores busy, ${of(singles, 'jobsPerCpuSecond').toFixed(1)} jobs per CPU-second; median of ${ROUNDS} rounds`,
    );
    out(
      `2 servers: ${of(doubles, 'jobsPerSecond').toFixed(1)} jobs/s, ${of(doubles, 'coresBusy').toFixed(2)} of ${cores} cores busy, ${of(doubles, 'jobsPerCpuSecond').toFixed(1)} jobs per CPU-second`,
    );
    out(
      `  jobs/s ratio ${ratio.toFixed(2)}x of 1 server; jobs per CPU-second ratio ${costRatio.toFixed(2)}x (target >= 0.9x: a second server on the queue wastes no work)`,
    );
    if (saturated)
      out(
        `  one server already keeps ${of(singles, 'coresBusy').toFixed(2)} of the machine's ${cores} cores busy, so a second on the same machine has little room to add jobs/s; run the servers on separate machines to see them add up`,
      );
    reportFigures('jobs', [
      {
        figure: 'jobs/s, 2 servers vs 1 on one queue',
        svc: of(doubles, 'jobsPerSecond'),
        baseline: of(singles, 'jobsPerSecond'),
        unit: 'jobs/s',
        ratio,
        note: `${JOBS} jobs of ${ITEMS} calculate items per side and round, ${CONCURRENCY} submitters; cores busy ${of(singles, 'coresBusy').toFixed(2)} with 1 server, ${of(doubles, 'coresBusy').toFixed(2)} with 2, of ${cores}${saturated ? ': one server already keeps most of the machine busy, so jobs/s is a figure here, not a target' : ''}`,
      },
      {
        figure: 'jobs per CPU-second, 2 servers vs 1 on one queue',
        svc: of(doubles, 'jobsPerCpuSecond'),
        baseline: of(singles, 'jobsPerCpuSecond'),
        unit: 'jobs/CPU-s',
        ratio: costRatio,
        target: { on: 'ratio', op: '>=', value: 0.9 },
        note: 'CPU of the whole machine (servers, PostgreSQL, the submitting client) per job: two servers sharing the queue must not spend more on each job (no duplicate runs, no lock storms)',
      },
      {
        figure: 'submit to running, idle queue (median)',
        svc: median(idle),
        unit: 'ms',
        target: { on: 'svc', op: '<', value: 50 },
        note: `p90 ${percentile(idle, 90).toFixed(1)} ms over ${IDLE_JOBS} sequential jobs`,
      },
    ]);
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await database.drop();
  }
}

await main();
