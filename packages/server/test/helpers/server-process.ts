import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { TestDatabase } from './test-database.ts';

const BIN = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));

/** `svc-server start` as its own process, for tests that kill it (-9) or run several. */
export interface ServerProcess {
  child: ChildProcessWithoutNullStreams;
  baseUrl: string;
  exited: Promise<number | null>;
  output(): string;
}

/** Starts the binary on `database` with `env`, resolving once it logs that it listens (port 0 unless given). */
export async function startServerProcess(database: TestDatabase, env: Record<string, string> = {}, timeoutMs = 60_000): Promise<ServerProcess> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_') && name !== 'DATABASE_URL'));
  const child = spawn(process.execPath, [BIN, 'start'], {
    env: { ...inherited, SVC_HOST: '127.0.0.1', SVC_PORT: '0', SVC_LOG_LEVEL: 'info', SVC_DATA_DIR: database.dataDir, ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  // A long run logs a line per request: keep the last part only.
  const keep = (chunk: string) => {
    output += chunk;
    if (output.length > 1_048_576) output = output.slice(-262_144);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  child.stdin.end();
  // No test may leave a server behind, whatever happens to the test.
  const killer = setTimeout(() => child.kill('SIGKILL'), 10 * 60_000);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => (clearTimeout(killer), resolve(code))));
  let done = false;
  void exited.then(() => (done = true));
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const line = output.split('\n').find((candidate) => candidate.includes('"msg":"svc listening"'));
    if (line) return { child, baseUrl: String((JSON.parse(line) as { baseUrl: string }).baseUrl), exited, output: () => output };
    if (done) throw new Error(`svc-server exited before listening:\n${output}`);
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error(`svc-server did not listen within ${timeoutMs} ms:\n${output}`);
}
