/**
 * Soak: a mixed workload for a set number of minutes against one svc-server process, printing
 * requests served, errors (target 0), p50/p99 latency per interval, and the server's resident
 * memory (target: its floor grows under 10% from the first interval to the last). The baseline is
 * the same run's first interval: the last interval's p99 and memory floor are compared with it.
 *
 * The workload, by weight: blackboard puts and channel reads, catalog search and artifact reads,
 * a developer key's whoami, download start + completion, and liveness probes. A hostile share, 1%
 * of the requests, sends the stall suite's worst payloads in turn (issue 26's named inputs:
 * backtracking patterns in a validate_json job, Markdown and unclosed HTML to document extract,
 * rouge_l over the largest eval bodies, a blackboard value of `a.` runs); their answers are not
 * counted as errors, what they do to everyone else is. A probe on its own thread reads `/healthz`
 * every 50 ms throughout: its p99 is what another caller waits (target under 50 ms).
 *
 * Run:
 *   pnpm bench:soak                                   (embedded database, 3 minutes, the first 60 s warm-up)
 *   pnpm bench:soak -- --minutes 10 --concurrency 16
 *   pnpm bench:soak -- --hostile 0                    (the same load without the hostile share)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres pnpm bench:soak -- --database postgres
 * Exit status 1 when any request of the rest failed, the /healthz p99 reached 50 ms, or memory grew
 * 10% or more after warm-up.
 */
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { createClient } from '@svc/client';
import { processTree, status } from './process-memory.ts';
import { reportFigures } from './report.ts';
import { percentile } from './stats.ts';
import { createTestDatabase } from '@svc/testing/test-database';
import { startServerProcess } from '@svc/testing/server-process';
import { LIFTED_BLACKBOARD_LIMITS } from './lifted-limits.ts';
import { worstPayloads } from '@svc/testing/stall-payloads';
import { benchArguments } from './args.ts';

const { values } = parseArgs({
  args: benchArguments(),
  options: {
    minutes: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '8' },
    interval: { type: 'string', default: '15' },
    database: { type: 'string', default: 'embedded' },
    hostile: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '60' },
  },
});
const durationMs = Number(values.minutes) * 60_000;
const intervalMs = Number(values.interval) * 1000;
const concurrency = Number(values.concurrency);
const warmUpMs = Number(values.warmup) * 1000;
const out = (line: string) => process.stdout.write(`${line}\n`);

if (values.database === 'postgres') {
  const admin = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!admin) {
    out('soak: --database postgres needs BENCH_DATABASE_URL (an admin URL; a fresh database is made and dropped).');
    process.exit(2);
  }
  process.env.TEST_DATABASE_URL = admin;
} else {
  delete process.env.TEST_DATABASE_URL;
}

const OPERATOR_TOKEN = 'soak-operator-token-0123456789abcdef';
const database = await createTestDatabase();
const server = await startServerProcess(database, {
  SVC_OPERATOR_TOKEN: OPERATOR_TOKEN,
  SVC_CATALOG_DEMO: 'on',
  ...LIFTED_BLACKBOARD_LIMITS,
}).catch(async (error: unknown) => {
  await database.drop();
  throw error;
});

/** Resident memory of the server process, in MiB (Linux /proc). */
/** The server's process tree: on the embedded database, the database runs in a child process. */
async function residentMiB(): Promise<number> {
  return processTree(server.child.pid!).reduce((sum, pid) => sum + (status(pid)?.rss ?? 0), 0) / 1048576;
}

const client = (token?: string) => createClient({ baseUrl: server.baseUrl, token, retry: 0, timeout: 30_000 });
const session = await client().oauth.login({ clientName: 'soak' });
const key = await client(session.accessToken).developerKeys.create({ body: { name: 'soak', scopes: ['models:read'] } });
const hostileKey = await client(session.accessToken).developerKeys.create({
  body: { name: 'soak hostile', scopes: ['inference:invoke', 'jobs:write', 'jobs:read'] },
});
const plan = (await client().catalog.downloadPlan({ params: { id: 'prompt-injection-rules' } })).files.find((file) => file.path === 'rules.jsonl')!;

let sequence = 0;
const operations: Array<[weight: number, name: string, run: () => Promise<unknown>]> = [
  [30, 'blackboard.put', () => client().blackboard.put({ body: { key: `soak:${sequence % 200}`, value: { text: `soak ${sequence}` } } })],
  [20, 'blackboard.get', () => client().blackboard.get({ query: { key: `soak:${sequence % 200}` } })],
  [15, 'catalog.search', () => client().catalog.search({ query: { q: sequence % 2 ? 'sentiment' : 'prompt injection' } })],
  [10, 'catalog.artifact', () => client().catalog.artifact({ params: { id: 'tiny-sentiment-lexicon' } })],
  [10, 'oauth.whoami (developer key)', () => client(key.secret).oauth.whoami()],
  [
    10,
    'download + completion',
    async () => {
      const caller = client(`soak-caller-${sequence}`);
      const started = await caller.withResponse.catalog.download({ params: { id: 'prompt-injection-rules', path: 'rules.jsonl' } });
      const completionToken = started.data.headers.get('x-svc-completion-token')!;
      return caller.catalog.completeDownload({
        params: { id: 'prompt-injection-rules', path: 'rules.jsonl' },
        body: { sha256: plan.sha256, sizeBytes: plan.sizeBytes, completionToken },
      });
    },
  ],
  [5, 'system.healthz', () => client().system.healthz()],
];
const totalWeight = operations.reduce((sum, [weight]) => sum + weight, 0);

/** The hostile share in percent (`--hostile 0` turns it off, to see the same load without it). */
const hostilePercent = Number(values.hostile);
const HOSTILE_EVERY = hostilePercent > 0 ? Math.round(100 / hostilePercent) : Number.POSITIVE_INFINITY;
const hostile = worstPayloads();
const tokens = { none: undefined, operator: OPERATOR_TOKEN, agent: session.accessToken, developerKey: hostileKey.secret } as const;
const hostileAnswers = new Map<string, number>();
async function sendHostile(turn: number): Promise<void> {
  const { routeId, payload, headers } = hostile[turn % hostile.length]!;
  const token = tokens[payload.credential];
  const label = `${routeId} (${payload.kind})`;
  try {
    const response = await fetch(`${server.baseUrl}${payload.path}`, {
      method: payload.method,
      headers: {
        ...headers(),
        ...(payload.contentType ? { 'content-type': payload.contentType } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      // The named payloads are JSON text; a byte body would be a Buffer's worth of the same.
      body: typeof payload.body === 'string' || payload.body === undefined ? payload.body : Buffer.from(payload.body),
      signal: AbortSignal.timeout(60_000),
    });
    await response.arrayBuffer();
    hostileAnswers.set(`${label}: ${response.status}`, (hostileAnswers.get(`${label}: ${response.status}`) ?? 0) + 1);
  } catch (error) {
    hostileAnswers.set(
      `${label}: ${(error as Error).message.slice(0, 80)}`,
      (hostileAnswers.get(`${label}: ${(error as Error).message.slice(0, 80)}`) ?? 0) + 1,
    );
  }
}

/** /healthz every 50 ms from its due time, on its own thread (see healthz-probe-thread.ts). */
function probeHealthz(): Promise<number[]> {
  const probe = new Worker(new URL('./healthz-probe-thread.ts', import.meta.url), {
    workerData: { url: `${server.baseUrl}/healthz`, durationMs: stopAt - performance.now() },
  });
  return new Promise((resolve, reject) => {
    probe.once('message', resolve);
    probe.once('error', reject);
  });
}
function pick(): (typeof operations)[number] {
  let draw = (sequence * 7919) % totalWeight;
  for (const operation of operations) {
    if (draw < operation[0]) return operation;
    draw -= operation[0];
  }
  return operations[0]!;
}

interface Interval {
  latencies: number[];
  errors: number;
}
let current: Interval = { latencies: [], errors: 0 };
const errorsByOperation = new Map<string, number>();
const started = performance.now();
const stopAt = started + durationMs;

let hostileSent = 0;
const worker = async () => {
  while (performance.now() < stopAt) {
    sequence++;
    if (Number.isFinite(HOSTILE_EVERY) && sequence % HOSTILE_EVERY === 0) {
      await sendHostile(hostileSent++);
      continue;
    }
    const [, name, run] = pick();
    const begun = performance.now();
    try {
      await run();
      current.latencies.push(performance.now() - begun);
    } catch (error) {
      current.errors++;
      errorsByOperation.set(
        `${name}: ${(error as Error).message.slice(0, 120)}`,
        (errorsByOperation.get(`${name}: ${(error as Error).message.slice(0, 120)}`) ?? 0) + 1,
      );
    }
  }
};

out(
  `soak: ${values.minutes} min, ${concurrency} concurrent, database ${database.kind}, server pid ${server.child.pid}, RSS at start ${(await residentMiB()).toFixed(1)} MiB`,
);
out('interval  requests  errors  p50 ms  p99 ms  RSS MiB: floor  peak  live heap MiB  database RSS MiB');
/**
 * Memory is sampled every second. The server's heap is a sawtooth under this load (garbage builds
 * up to a major collection, then falls back), so one sample lands anywhere on a tooth; a leak
 * shows as a floor that rises. Growth is the last interval's floor against the first's.
 */
let rssSamples: number[] = [];
const sampler = setInterval(async () => rssSamples.push(await residentMiB()), 1000);
const rows: Array<{ requests: number; errors: number; p99: number; floor: number; peak: number; live: number; databaseRss: number }> = [];
/** The server's live heap (after its latest full collection), from its own metrics. */
async function liveHeapMiB(): Promise<number> {
  const text = await client(OPERATOR_TOKEN).system.metrics();
  return Number(/^svc_nodejs_heap_live_bytes (\d+)/m.exec(text)?.[1] ?? 0) / 1048576;
}
/** The embedded database's process (a child of the server); 0 on PostgreSQL. */
const databaseRssMiB = () =>
  processTree(server.child.pid!)
    .slice(1)
    .reduce((sum, pid) => sum + (status(pid)?.rss ?? 0), 0) / 1048576;
const reporter = setInterval(async () => {
  const done = current;
  current = { latencies: [], errors: 0 };
  const samples = rssSamples.length > 0 ? rssSamples : [await residentMiB()];
  rssSamples = [];
  const row = {
    requests: done.latencies.length,
    errors: done.errors,
    p99: percentile(done.latencies, 99),
    floor: Math.min(...samples),
    peak: Math.max(...samples),
    live: await liveHeapMiB(),
    databaseRss: databaseRssMiB(),
  };
  rows.push(row);
  out(
    `${String(Math.round((performance.now() - started) / 1000)).padStart(6)} s  ${String(row.requests).padStart(8)}  ${String(row.errors).padStart(6)}  ${percentile(done.latencies, 50).toFixed(1).padStart(6)}  ${row.p99.toFixed(1).padStart(6)}  ${row.floor.toFixed(1).padStart(12)}  ${row.peak.toFixed(1).padStart(5)}  ${row.live.toFixed(1).padStart(13)}  ${row.databaseRss.toFixed(1).padStart(16)}`,
  );
}, intervalMs);

const [healthzLatencies] = await Promise.all([probeHealthz(), ...Array.from({ length: concurrency }, worker)]);
clearInterval(reporter);
clearInterval(sampler);
const endRss = await residentMiB();
server.child.kill('SIGTERM');
await server.exited;
await database.drop();

const requests = rows.reduce((sum, row) => sum + row.requests, 0) + current.latencies.length;
const errors = rows.reduce((sum, row) => sum + row.errors, 0) + current.errors;
/**
 * Warm-up (`--warmup`, 60 s): caches fill, the JIT settles, pools open, and V8 sizes its heap to
 * the allocation rate (resident memory climbs for the first 30-45 s on two cores, then holds).
 * Growth compares the first interval that ends after warm-up with the last one.
 */
const steady = rows.filter((_, index) => (index + 1) * intervalMs > warmUpMs);
const warm = steady[0]?.floor ?? rows.at(-1)?.floor ?? endRss;
const lastFloor = rows.at(-1)?.floor ?? endRss;
const peak = Math.max(endRss, ...rows.map((row) => row.peak));
const growth = (lastFloor / warm - 1) * 100;
const liveAfterWarmUp = steady[0]?.live ?? 0;
const liveAtEnd = rows.at(-1)?.live ?? 0;
out('');
out(`requests served ${requests} and ${hostileSent} hostile (${hostilePercent}%); errors among the rest ${errors} (target 0)`);
for (const [what, count] of errorsByOperation) out(`  ${count} x ${what}`);
for (const [what, count] of hostileAnswers) out(`  hostile: ${count} x ${what}`);
const healthzP99 = percentile(healthzLatencies, 99);
out(
  `/healthz p99 ${healthzP99.toFixed(1)} ms over ${healthzLatencies.length} probes, worst ${Math.max(0, ...healthzLatencies).toFixed(0)} ms (target < 50 ms)`,
);
if (rows.length > 1) out(`p99 last interval / first: ${(rows.at(-1)!.p99 / Math.max(0.001, rows[0]!.p99)).toFixed(2)}`);
out(
  `RSS floor after ${values.warmup} s of warm-up ${warm.toFixed(1)} MiB, in the last interval ${lastFloor.toFixed(1)} MiB: growth ${growth.toFixed(1)}% (target < 10%); peak ${peak.toFixed(1)} MiB, at end ${endRss.toFixed(1)} MiB`,
);
out(
  `live heap after a full collection: ${liveAfterWarmUp.toFixed(1)} MiB after warm-up, ${liveAtEnd.toFixed(1)} MiB at the end (it moves with what is in flight when the collection runs; a leak makes it climb)`,
);
const p99Drift = rows.length > 1 ? rows.at(-1)!.p99 / Math.max(0.001, rows[0]!.p99) : undefined;
reportFigures('soak', [
  {
    figure: `errors in ${values.minutes} min (${database.kind})`,
    svc: errors,
    unit: 'errors',
    target: { on: 'svc', op: '<', value: 1 },
    note: `${requests} requests, ${concurrency} concurrent, and ${hostileSent} hostile ones not counted`,
  },
  {
    figure: `/healthz p99 with ${hostilePercent}% hostile (${database.kind})`,
    svc: healthzP99,
    unit: 'ms',
    target: { on: 'svc', op: '<', value: 50 },
    note: `${healthzLatencies.length} probes, one due every 50 ms`,
  },
  {
    figure: `RSS growth after warm-up (${database.kind})`,
    svc: growth,
    unit: '%',
    target: { on: 'svc', op: '<', value: 10 },
    note: `RSS floor ${warm.toFixed(1)} MiB after ${values.warmup} s of warm-up, ${lastFloor.toFixed(1)} MiB in the last interval (sampled every second); peak ${peak.toFixed(1)} MiB; live heap ${liveAfterWarmUp.toFixed(1)} -> ${liveAtEnd.toFixed(1)} MiB`,
  },
  ...(p99Drift === undefined
    ? []
    : [{ figure: `p99, last interval vs first (${database.kind})`, svc: rows.at(-1)!.p99, baseline: rows[0]!.p99, unit: 'ms', ratio: 1 / p99Drift }]),
]);
process.exit(errors > 0 || growth >= 10 || healthzP99 >= 50 ? 1 : 0);
