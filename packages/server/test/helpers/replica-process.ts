import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestDatabase } from './test-database.ts';

const BIN = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));

export interface ReplicaProcess {
  baseUrl: string;
  child: ChildProcess;
  /** SIGKILL: the process dies mid-whatever, as a crashed replica does. */
  kill(): void;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * A second `svc-server` process on the same PostgreSQL database as the test's server: a real
 * replica, with its own pool, event loop and memory. Resolves once it logs `svc listening`.
 */
export async function startReplicaProcess(database: TestDatabase, env: Record<string, string>): Promise<ReplicaProcess> {
  if (!database.databaseUrl) throw new Error('a replica process needs PostgreSQL (TEST_DATABASE_URL)');
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_') && name !== 'DATABASE_URL'));
  const child = spawn(process.execPath, [BIN, 'start'], {
    env: { ...inherited, SVC_HOST: '127.0.0.1', SVC_PORT: '0', SVC_LOG_LEVEL: 'info', SVC_DATA_DIR: `${database.dataDir}/replica`, DATABASE_URL: database.databaseUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 300_000);
  child.on('exit', () => clearTimeout(killer));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    const deadline = setTimeout(() => reject(new Error(`replica did not start within 60 s:\n${buffer}`)), 60_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (const line of buffer.split('\n')) {
        if (!line.includes('"svc listening"')) continue;
        clearTimeout(deadline);
        resolve((JSON.parse(line) as { baseUrl: string }).baseUrl);
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (buffer += chunk));
    child.once('exit', (code) => reject(new Error(`replica exited with ${code} before listening:\n${buffer}`)));
  });
  return {
    baseUrl,
    child,
    kill: () => child.kill('SIGKILL'),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
