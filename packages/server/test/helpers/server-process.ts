import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { TestDatabase } from './test-database.ts';

const BIN = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));

/** `svc-server start` as a child process over a test database, as a user runs it. */
export interface ServerProcess {
  child: ChildProcessWithoutNullStreams;
  baseUrl: string;
  exited: Promise<number | null>;
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

export async function startServerProcess(database: TestDatabase, env: Record<string, string>, options: { deadlineMs?: number } = {}): Promise<ServerProcess> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_') && name !== 'DATABASE_URL'));
  const child = spawn(process.execPath, [BIN, 'start'], {
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
  // Bounded: whatever happens to the test, the process is gone after the deadline.
  const killer = setTimeout(() => child.kill('SIGKILL'), options.deadlineMs ?? 120_000);
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      alive.delete(child);
      resolve(code);
    }),
  );
  let stdout = '';
  let stderr = '';
  let listening = false;
  // Kept only until the server listens (to explain a failed start); later lines are read and dropped.
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    if (!listening) stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (!listening) stderr += chunk;
  });
  child.stdin.end();
  let closed = false;
  void exited.then(() => (closed = true));
  const started = performance.now();
  let baseUrl: string | undefined;
  while (!baseUrl) {
    const line = stdout.split('\n').find((entry) => entry.includes('"svc listening"'));
    if (line) {
      baseUrl = String((JSON.parse(line) as { baseUrl: string }).baseUrl);
      listening = true;
    }
    else if (closed || performance.now() - started > 60_000) throw new Error(`svc-server did not start; stdout:\n${stdout}\nstderr:\n${stderr}`);
    else await sleep(25);
  }
  return {
    child,
    baseUrl,
    exited,
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
