/**
 * How the benches start svc: in the bench's own process (a worker thread's, so its CPU time can
 * be read apart from the load generator's) or as `svc-server start`, its own process, as a user
 * runs it. One place for the settings every bench server shares.
 */
import { spawn } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import type { MessagePort } from 'node:worker_threads';
import { createServer, loadConfig, type SvcServer } from '@svc/server';
import { SERVER_BIN } from '@svc/testing/server-process';

/** svc in this thread on `dataDir` (and `databaseUrl` when given), listening on a free loopback port, logging nothing. */
export async function startSvcInThread(
  dataDir: string,
  databaseUrl: string | undefined,
  env: Record<string, string | undefined> = {},
): Promise<{ svc: SvcServer; baseUrl: string; apiUrl: string }> {
  const svc = await createServer(
    loadConfig({
      SVC_HOST: '127.0.0.1',
      SVC_PORT: '0',
      SVC_DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      SVC_LOG_LEVEL: 'silent',
      ...env,
    }),
  );
  const { baseUrl, apiUrl } = await svc.listen();
  return { svc, baseUrl, apiUrl };
}

/**
 * `svc-server start` on the embedded database in `dataDir`, resolved the moment it logs that it
 * listens (the cold-start bench times exactly that), with `stop` sending SIGTERM and waiting.
 */
export async function spawnSvc(dataDir: string, env: Record<string, string> = {}): Promise<{ baseUrl: string; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [SERVER_BIN, 'start'], {
    env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_LOG_LEVEL: 'info', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    let listening = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      // Read to the end of its life, so the pipe of its log never blocks it; once it listens, the
      // rest is drained unread (scanning what was kept, line by line for each request's log
      // line, cost this process a split of up to 1 MB per request, on the cores the bench measures).
      if (listening) return;
      buffered += chunk;
      const end = buffered.lastIndexOf('\n');
      const line = buffered
        .slice(0, end + 1)
        .split('\n')
        .find((candidate) => candidate.includes('"svc listening"'));
      buffered = buffered.slice(end + 1);
      if (!line) return;
      listening = true;
      buffered = '';
      resolve(JSON.parse(line).baseUrl);
    });
    child.once('exit', (code) => reject(new Error(`svc-server exited with ${code} before listening`)));
  });
  return {
    baseUrl,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * The kernel's id of the calling thread (Linux: `/proc/thread-self` is `<pid>/task/<tid>`), so a
 * bench can pin that thread alone to a core (`taskset -p -c <core> <tid>`); undefined elsewhere.
 */
export function threadTid(): number | undefined {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').at(-1));
  } catch {
    return undefined;
  }
}

/**
 * The messages a bench's server thread answers from the bench: `cpu` (this thread's CPU time), `tid` (its kernel thread id),
 * BENCH_PROFILE_DIR's `profile:start` and `profile:stop:<file>` (this thread's CPU profile over
 * chosen rounds only, leaving out start-up and migrations) and `close`. `more` answers the rest.
 */
export function answerBenchMessages(port: MessagePort, close: () => Promise<void>, more?: (message: string) => void): void {
  let profiler: Session | undefined;
  port.on('message', async (message: string) => {
    if (message === 'cpu') port.postMessage({ cpu: process.threadCpuUsage() });
    if (message === 'tid') port.postMessage({ tid: threadTid() });
    if (message === 'profile:start') {
      profiler = new Session();
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
      port.postMessage({ profiling: true });
    }
    if (message.startsWith('profile:stop:') && profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      await writeFile(message.slice('profile:stop:'.length), JSON.stringify(profile));
      profiler.disconnect();
      port.postMessage({ profiled: true });
    }
    if (message === 'close') void close().then(() => process.exit(0));
    more?.(message);
  });
}
