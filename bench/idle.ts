/**
 * What an idle svc costs: `svc-server start` with no traffic, its CPU per second counting its
 * database's (the server process plus the embedded database's process, or plus the PostgreSQL
 * backends of its connections when the server runs here; each part printed) and, on PostgreSQL,
 * the database's transactions per second (`pg_stat_database` xact_commit + xact_rollback, less
 * this bench's own reads). Targets (issue 42): under 2 ms of CPU a second, svc and its database
 * together, and under 1 transaction a second.
 *
 * The embedded database unless BENCH_DATABASE_URL names a PostgreSQL server.
 * Run: pnpm bench:idle [-- --seconds 60 --settle 35]
 *
 * The default window (60 s after 35 s) is the one CI-sized runs take. What an idle server costs
 * over hours is read with a later and longer window: `-- --settle 120 --seconds 600` starts past
 * V8's memory reducer (one full collection of the heap start-up left, about 110 s after the
 * start: 70 ms of the main thread and as much of V8's helper threads, once) and holds a turn of
 * the 10-minute housekeeping (identity, blackboard, rate counters, limits, MCP, responses).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';
import { createTestDatabase } from '@svc/testing/test-database';
import { benchArguments } from './args.ts';
import { processTree } from './process-memory.ts';
import { reportFigures } from './report.ts';
import { spawnSvc } from './svc-servers.ts';

// pg is @svc/testing's dependency (it makes the bench's databases), not the root's: the same copy is read through it.
const pg = createRequire(import.meta.resolve('@svc/testing/test-database'))('pg') as {
  Client: new (options: {
    connectionString: string;
  }) => {
    connect(): Promise<void>;
    query<Row>(sql: string): Promise<{ rows: Row[] }>;
    end(): Promise<void>;
  };
};

const { values } = parseArgs({ args: benchArguments(), options: { seconds: { type: 'string', default: '60' }, settle: { type: 'string', default: '35' } } });
const windowMs = Number(values.seconds) * 1000;
/**
 * Start-up's own work (migrations, the first claim, and on the embedded database the first
 * backstop one lease, 31 s, after the start: db/backstop.ts) is over before the window opens, and
 * on PostgreSQL its transactions have reached the statistics (up to 10 s late). The window's
 * default, a minute, holds a whole turn of every periodic task (backstops every 10 or 60 s,
 * housekeeping every 20 to 60 s), so its figure does not depend on where the turns fall.
 */
const SETTLE_MS = Number(values.settle) * 1000;
if (!(SETTLE_MS >= 35_000) || !(windowMs > 0)) throw new Error("--settle: at least 35 seconds (start-up's own work, above); --seconds: more than 0");
/** PostgreSQL sends an idle backend's statistics within 10 s: the count is read again that much after the window. */
const STATS_SETTLE_MS = 11_000;
const TICKS_PER_SECOND = 100;

/**
 * CPU time (ms) a process has used so far: the sum of its threads' time on a CPU from
 * /proc/<pid>/task/<tid>/schedstat (nanoseconds), since /proc/<pid>/stat counts 10 ms ticks, half a
 * millisecond a second over a 20 s window, a quarter of the target. Threads that ended are not
 * counted; an idle server's threads live as long as it does. Falls back to the ticks where there is
 * no schedstat.
 */
function cpuMs(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => {
      try {
        return sum + Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
      } catch {
        return sum;
      }
    }, 0);
  } catch {
    return cpuTicksMs(pid);
  }
}

/** CPU time (ms) from /proc/<pid>/stat, user and system, in clock ticks of 10 ms. */
function cpuTicksMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

const database = await createTestDatabase({ adminUrl: process.env.BENCH_DATABASE_URL, prefix: 'svc_bench_idle' });
const svc = await spawnSvc(database.dataDir, database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {});
const reader = database.databaseUrl ? new pg.Client({ connectionString: database.databaseUrl }) : undefined;
try {
  await reader?.connect();
  const transactions = async () =>
    Number(
      (await reader!.query<{ total: string }>('SELECT (xact_commit + xact_rollback)::text AS total FROM pg_stat_database WHERE datname = current_database()'))
        .rows[0]!.total,
    );
  /**
   * PostgreSQL's backends serving svc's connections (its pool and its LISTEN connections), when
   * the server runs on this machine: their CPU is svc's database's, as the embedded database's
   * process is. PostgreSQL's own background processes serve every database and are not counted.
   */
  const backends = async () =>
    (
      await reader!.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = $$client backend$$',
      )
    ).rows
      .map((row) => row.pid)
      .filter((pid) => existsSync(`/proc/${pid}/task`));
  await sleep(SETTLE_MS);
  // The embedded database's process, or the PostgreSQL backends of svc's connections.
  const databasePids = async () => (reader ? await backends() : processTree(svc.pid).filter((pid) => pid !== svc.pid));
  const before = new Map((await databasePids()).map((pid) => [pid, cpuMs(pid)]));
  const serverFrom = cpuMs(svc.pid);
  const xactFrom = reader ? await transactions() : 0;
  const started = performance.now();
  await sleep(windowMs);
  const seconds = (performance.now() - started) / 1000;
  const server = (cpuMs(svc.pid) - serverFrom) / seconds;
  // A process there at both ends counts its CPU since the start; one born in the window (a new
  // connection's backend) all of its CPU; one that ended in the window is lost, and counted apart.
  const after = await databasePids();
  const databaseMs = after.reduce((sum, pid) => sum + cpuMs(pid) - (before.get(pid) ?? 0), 0) / seconds;
  const ended = [...before.keys()].filter((pid) => !after.includes(pid)).length;
  const total = server + databaseMs;
  let perSecond: number | undefined;
  if (reader) {
    // The server's transactions of the window reach the statistics up to 10 s late; this bench's own reads (four) are taken off.
    await sleep(STATS_SETTLE_MS);
    const elapsed = (performance.now() - started) / 1000;
    perSecond = Math.max(0, (await transactions()) - xactFrom - 4) / elapsed;
  }
  const load = loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
  const databasePart =
    database.kind === 'embedded'
      ? 'embedded database process'
      : after.length > 0
        ? `${after.length} PostgreSQL backends of its connections${ended > 0 ? ` (${ended} more ended in the window, not counted)` : ''}`
        : 'PostgreSQL backends not readable here (another machine?), not counted';
  process.stdout.write(
    [
      `idle: svc-server start, no traffic, ${seconds.toFixed(0)} s window after ${SETTLE_MS / 1000} s of settling (${database.kind} database)`,
      `  CPU, svc and its database: ${total.toFixed(2)} ms/s (target < 2: ${total < 2 ? 'met' : 'NOT met'})`,
      `    server process ${server.toFixed(2)} ms/s + ${databasePart} ${databaseMs.toFixed(2)} ms/s`,
      ...(perSecond === undefined ? [] : [`  database transactions: ${perSecond.toFixed(2)}/s (target < 1: ${perSecond < 1 ? 'met' : 'NOT met'})`]),
      `  load average ${load} on ${cpus().length} cores (CPU time from the threads' schedstat; each wake of an idle process costs more on a loaded machine)`,
      '',
    ].join('\n'),
  );
  reportFigures('idle', [
    {
      figure: `idle CPU of svc and its database (${database.kind})`,
      svc: Number(total.toFixed(2)),
      unit: 'ms/s',
      target: { on: 'svc' as const, op: '<' as const, value: 2 },
      note: `server process ${server.toFixed(2)}, ${databasePart} ${databaseMs.toFixed(2)}`,
    },
    ...(perSecond === undefined
      ? []
      : [
          {
            figure: 'idle database transactions (postgres)',
            svc: Number(perSecond.toFixed(2)),
            unit: '/s',
            target: { on: 'svc' as const, op: '<' as const, value: 1 },
          },
        ]),
  ]);
} finally {
  await reader?.end();
  await svc.stop();
  await database.drop();
}
