/**
 * Start-up of the `svc` CLI as a user sees it: `svc --version` (answered before the contract
 * loads), `svc --help` (printed from the command manifest, no command module loaded) and
 * `svc board get <channel>` (the blackboard's contract entry and client alone, one request to a
 * local server on the embedded database), each against bare `node -e 0` on the same Node.js, in
 * alternating rounds. Target (issue 44): under 300 ms for each on this machine. Figures are wall times of a new
 * process, so they move with the machine's load: the load average is printed beside them.
 *
 * Run: pnpm bench:cli-start [-- --rounds 10]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { benchArguments } from './args.ts';
import { reportFigures } from './report.ts';
import { median } from './stats.ts';
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

/** Wall time of one process from spawn to exit, in ms. */
async function timed(args: string[], extraEnv: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  await run(process.execPath, args, { env: { ...env, ...extraEnv }, timeout: 60_000 });
  return performance.now() - started;
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const loadBefore = load();
const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-cli-start-'));
const server = await spawnSvc(dataDir);
const bare: number[] = [];
const version: number[] = [];
const help: number[] = [];
const boardGet: number[] = [];
const boardGetFromTypeScript: number[] = [];
try {
  const serverEnv = { SVC_BASE_URL: server.baseUrl };
  await timed([BIN, 'board', 'get', 'bench-cli-start'], serverEnv); // warm the file cache once
  for (let round = 0; round < rounds; round++) {
    bare.push(await timed(['-e', '0']));
    version.push(await timed([BIN, '--version']));
    help.push(await timed([BIN, '--help']));
    boardGet.push(await timed([BIN, 'board', 'get', 'bench-cli-start'], serverEnv));
    boardGetFromTypeScript.push(await timed([TYPESCRIPT_BIN, 'board', 'get', 'bench-cli-start'], serverEnv));
  }
} finally {
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}

const ms = (value: number) => `${value.toFixed(0)} ms`;
const line = (name: string, times: number[]) =>
  `  ${name.padEnd(26)}: median ${ms(median(times))} (${(median(times) / median(bare)).toFixed(2)}x bare node); target < 300 ms: ${median(times) < 300 ? 'met' : 'NOT met'}`;
process.stdout.write(
  [
    `cli-start: ${rounds} rounds, spawn to exit on Node.js ${process.versions.node}`,
    `  bare node -e 0            : median ${ms(median(bare))}`,
    line('svc --version', version),
    line('svc --help', help),
    line('svc board get <channel>', boardGet),
    line('  same, from src/bin.ts', boardGetFromTypeScript),
    `  load average ${loadBefore} before, ${load()} after, on ${cpus().length} cores`,
    '',
  ].join('\n'),
);
reportFigures('cli-start', [
  {
    figure: 'svc --version, spawn to exit',
    svc: Math.round(median(version)),
    baseline: Math.round(median(bare)),
    unit: 'ms',
    target: { on: 'svc', op: '<', value: 300 },
    note: `baseline: bare node -e 0; ${rounds} rounds`,
  },
  {
    figure: 'svc --help, spawn to exit',
    svc: Math.round(median(help)),
    baseline: Math.round(median(bare)),
    unit: 'ms',
    target: { on: 'svc', op: '<', value: 300 },
    note: `baseline: bare node -e 0; ${rounds} rounds`,
  },
  {
    figure: 'svc board get, spawn to exit (one request, local server)',
    svc: Math.round(median(boardGet)),
    baseline: Math.round(median(bare)),
    unit: 'ms',
    target: { on: 'svc', op: '<', value: 300 },
    note: `baseline: bare node -e 0; ${rounds} rounds`,
  },
]);
