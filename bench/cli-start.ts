/**
 * Start-up of the `svc` CLI as a user sees it: `svc --version` (answered before the contract
 * loads), `svc --help` (printed from the command manifest, no command module loaded) and
 * `svc board get <channel>` (the blackboard's contract entry and client alone, one request to a
 * local server on the embedded database), each against bare `node -e 0` on the same Node.js, in
 * alternating rounds. Each is timed twice: through the published bin (dist/bin.js, the bundle
 * `npm i @svc/cli` installs, built here from the sources into a folder laid out as an install),
 * and through the workspace's launcher (bin/svc.js, the CLI tests' process). Target (issue 44):
 * under 300 ms for each on this machine, for the published bin. Figures are wall times of a new
 * process, so they move with the machine's load: the load average is printed beside them, and
 * each run's CPU (which moves much less).
 *
 * Run: pnpm bench:cli-start [-- --rounds 10]
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { benchArguments } from './args.ts';
import { reportFigures } from './report.ts';
import { median } from './stats.ts';
import { buildInstalledBin } from '../packages/cli/scripts/bin-build.ts';
import { spawnSvc } from './svc-servers.ts';

const { values } = parseArgs({ args: benchArguments(), options: { rounds: { type: 'string', default: '10' } } });
const rounds = Number(values.rounds);
// The workspace's `svc` (what the CLI tests spawn): a JavaScript first step that turns the compile
// cache on before any TypeScript is read. src/bin.ts alone is timed beside it for `board get`, to
// show what that step spares (Node's TypeScript stripper, loaded on every run otherwise).
const BIN = fileURLToPath(new URL('../packages/cli/bin/svc.js', import.meta.url));
const TYPESCRIPT_BIN = fileURLToPath(new URL('../packages/cli/src/bin.ts', import.meta.url));
const run = promisify(execFile);
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));

/** Wall times of one command's runs, and their CPU (user + system) where /proc tells it. */
interface Series {
  wall: number[];
  cpu: number[];
}
const series = (): Series => ({ wall: [], cpu: [] });

/**
 * CPU of this process's waited-for children so far, in ms (Linux: /proc/self/stat's cutime and
 * cstime, in ticks of 10 ms). A wall time moves with the machine's load; CPU much less, so the two
 * side by side tell a slow start from a busy machine.
 */
function childrenCpuMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined;
  }
}

/** Runs one process from spawn to exit and adds its wall time and CPU to `into`. */
async function timed(into: Series | undefined, args: string[], extraEnv: Record<string, string> = {}): Promise<void> {
  const cpuBefore = childrenCpuMs();
  const started = performance.now();
  await run(process.execPath, args, { env: { ...env, ...extraEnv }, timeout: 60_000 });
  const wall = performance.now() - started;
  const cpuAfter = childrenCpuMs();
  into?.wall.push(wall);
  if (cpuBefore !== undefined && cpuAfter !== undefined) into?.cpu.push(cpuAfter - cpuBefore);
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const loadBefore = load();
const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-cli-start-'));
const PUBLISHED_BIN = await buildInstalledBin(path.join(dataDir, 'installed-cli'));
const server = await spawnSvc(path.join(dataDir, 'server'));
const bare = series();
const published = { version: series(), help: series(), boardGet: series() };
const launcher = { version: series(), help: series(), boardGet: series() };
const boardGetFromTypeScript = series();
try {
  const serverEnv = { SVC_BASE_URL: server.baseUrl };
  const boardGet = ['board', 'get', 'bench-cli-start'];
  // Warm the file cache (and the compile cache) once for each.
  for (const bin of [BIN, PUBLISHED_BIN]) await timed(undefined, [bin, ...boardGet], serverEnv);
  for (let round = 0; round < rounds; round++) {
    await timed(bare, ['-e', '0']);
    for (const [bin, into] of [
      [PUBLISHED_BIN, published],
      [BIN, launcher],
    ] as const) {
      await timed(into.version, [bin, '--version']);
      await timed(into.help, [bin, '--help']);
      await timed(into.boardGet, [bin, ...boardGet], serverEnv);
    }
    await timed(boardGetFromTypeScript, [TYPESCRIPT_BIN, ...boardGet], serverEnv);
  }
} finally {
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
const cpu = (times: Series) => (times.cpu.length ? `, CPU ${ms(median(times.cpu))}` : '');
const line = (name: string, times: Series) =>
  `  ${name.padEnd(26)}: median ${ms(median(times.wall))}${cpu(times)} (${(median(times.wall) / median(bare.wall)).toFixed(2)}x bare node); target < 300 ms: ${median(times.wall) < 300 ? 'met' : 'NOT met'}`;
process.stdout.write(
  [
    `cli-start: ${rounds} rounds, spawn to exit on Node.js ${process.versions.node} (CPU: user + system, in 10 ms ticks)`,
    `  bare node -e 0            : median ${ms(median(bare.wall))}${cpu(bare)}`,
    'published bin (dist/bin.js, bundled):',
    line('svc --version', published.version),
    line('svc --help', published.help),
    line('svc board get <channel>', published.boardGet),
    'workspace launcher (bin/svc.js, then src/ through the compile cache):',
    line('svc --version', launcher.version),
    line('svc --help', launcher.help),
    line('svc board get <channel>', launcher.boardGet),
    line('  same, from src/bin.ts', boardGetFromTypeScript),
    `  load average ${loadBefore} before, ${load()} after, on ${cpus().length} cores`,
    '',
  ].join('\n'),
);
const figure = (name: string, times: Series, target: boolean) => ({
  figure: name,
  svc: Math.round(median(times.wall)),
  baseline: Math.round(median(bare.wall)),
  unit: 'ms',
  ...(target ? { target: { on: 'svc' as const, op: '<' as const, value: 300 } } : {}),
  note: `baseline: bare node -e 0; ${rounds} rounds${times.cpu.length ? `; CPU ${ms(median(times.cpu))} (bare ${ms(median(bare.cpu))})` : ''}`,
});
// The target (issue 44) is on what users run, the published bin; the launcher's figures are for comparison.
reportFigures('cli-start', [
  figure('svc --version, spawn to exit (published bin)', published.version, true),
  figure('svc --help, spawn to exit (published bin)', published.help, true),
  figure('svc board get, spawn to exit (published bin; one request, local server)', published.boardGet, true),
  figure('svc --version, spawn to exit (workspace launcher)', launcher.version, false),
  figure('svc --help, spawn to exit (workspace launcher)', launcher.help, false),
  figure('svc board get, spawn to exit (workspace launcher; one request, local server)', launcher.boardGet, false),
]);
