import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The workspace's `svc` (a JavaScript first step that turns the compile cache on, then src/bin.ts): what every CLI-process test runs. */
export const CLI_BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `svc` CLI as a child process with a clean environment (no SVC_* from the
 * caller), optional stdin, and a time limit.
 */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; input?: string | Buffer; timeoutMs?: number; cwd?: string } = {},
): Promise<CliRun> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], { env: { ...env, ...options.env }, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
