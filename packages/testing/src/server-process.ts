import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { SERVER_BIN } from './server-bin.ts';
import type { TestDatabase } from './test-database.ts';
import { waitUntil } from './wait-until.ts';

export { SERVER_BIN };

/** `svc-server start` as its own process, as a user runs it: for tests that kill it (-9), run several replicas, or soak it. */
export interface ServerProcess {
  child: ChildProcessWithoutNullStreams;
  baseUrl: string;
  exited: Promise<number | null>;
  /** The tail of what it printed (stdout and stderr). */
  output(): string;
  /** SIGKILL: no shutdown code runs, exactly like a crashed machine's process. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
}

const alive = new Set<ChildProcessWithoutNullStreams>();
/** For `test.after.always`: no server outlives its test file. */
export function killAllServerProcesses(): void {
  for (const child of alive) child.kill('SIGKILL');
}

export interface ServerProcessOptions {
  /** How long it may take to listen (default 60 s). */
  timeoutMs?: number;
  /** Killed after this, whatever happens to the test (default 10 min). */
  deadlineMs?: number;
  /** Node's own arguments before the binary (`--import` a probe, `--cpu-prof`). */
  nodeArguments?: readonly string[];
}

/** Starts the binary on `database` with `env`, resolving once it logs that it listens (port 0 unless given). */
export async function startServerProcess(database: TestDatabase, env: Record<string, string> = {}, options: ServerProcessOptions = {}): Promise<ServerProcess> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_') && name !== 'DATABASE_URL'));
  const child = spawn(process.execPath, [...(options.nodeArguments ?? []), SERVER_BIN, 'start'], {
    env: {
      ...inherited,
      SVC_HOST: '127.0.0.1',
      SVC_PORT: '0',
      SVC_LOG_LEVEL: 'info',
      SVC_DATA_DIR: database.dataDir,
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  alive.add(child);
  let output = '';
  // A long run logs a line per request: keep the last part only.
  const keep = (chunk: string) => {
    output += chunk;
    if (output.length > 1_048_576) output = output.slice(-262_144);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  child.stdin.end();
  const killer = setTimeout(() => child.kill('SIGKILL'), options.deadlineMs ?? 10 * 60_000);
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      alive.delete(child);
      resolve(code);
    }),
  );
  let done = false;
  void exited.then(() => (done = true));
  let line: string;
  try {
    line = await waitUntil(
      () => `svc-server to listen:\n${output}`,
      () => {
        const listening = output.split('\n').find((candidate) => candidate.includes('"msg":"svc listening"'));
        if (!listening && done) throw new Error(`svc-server exited before listening:\n${output}`);
        return listening;
      },
      { timeoutMs: options.timeoutMs ?? 60_000, intervalMs: 25 },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    child,
    baseUrl: String((JSON.parse(line) as { baseUrl: string }).baseUrl),
    exited,
    output: () => output,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
