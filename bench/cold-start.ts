/**
 * Time from `svc-server start` (a new process) to the first 200 on /healthz, with a fresh
 * embedded data directory (PGlite initialises a cluster, migrations run) and with an existing
 * one (reopened, nothing to migrate). Targets: under 3 s fresh, under 1.5 s existing.
 *
 * Run: pnpm bench:cold-start [-- --rounds 3]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSvc } from './svc-servers.ts';
import { parseArgs } from 'node:util';
import { reportFigures } from './report.ts';
import { median } from './stats.ts';
import { benchArguments } from './args.ts';

const { values } = parseArgs({ args: benchArguments(), options: { rounds: { type: 'string', default: '3' } } });
const rounds = Number(values.rounds);

/** Starts the server, waits for the first 200 on /healthz, stops it with SIGTERM; answers ms to ready. */
async function timeToHealthy(dataDir: string): Promise<number> {
  const started = performance.now();
  const server = await spawnSvc(dataDir);
  let ready: number | undefined;
  while (ready === undefined) {
    const response = await fetch(`${server.baseUrl}/healthz`).catch(() => undefined);
    if (response?.status === 200) ready = performance.now() - started;
    else await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await server.stop();
  return ready;
}

const fresh: number[] = [];
const existing: number[] = [];
for (let round = 0; round < rounds; round++) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-cold-start-'));
  try {
    fresh.push(await timeToHealthy(dataDir));
    existing.push(await timeToHealthy(dataDir));
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const spread = (times: number[]) => `rounds: ${times.map(seconds).join(', ')}`;
process.stdout.write(
  [
    `cold-start: ${rounds} rounds, svc-server start -> first 200 on /healthz (embedded database)`,
    `  fresh data directory   : median ${seconds(median(fresh))} (${spread(fresh)}); target < 3 s: ${median(fresh) < 3000 ? 'met' : 'NOT met'}`,
    `  existing data directory: median ${seconds(median(existing))} (${spread(existing)}); target < 1.5 s: ${median(existing) < 1500 ? 'met' : 'NOT met'}`,
    `  load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')} on ${cpus().length} cores`,
    '',
  ].join('\n'),
);
reportFigures('cold-start', [
  {
    figure: 'start to first 200 on /healthz, fresh data directory',
    svc: Number((median(fresh) / 1000).toFixed(2)),
    unit: 's',
    target: { on: 'svc', op: '<', value: 3 },
    note: spread(fresh),
  },
  {
    figure: 'start to first 200 on /healthz, existing data directory',
    svc: Number((median(existing) / 1000).toFixed(2)),
    unit: 's',
    target: { on: 'svc', op: '<', value: 1.5 },
    note: spread(existing),
  },
]);
