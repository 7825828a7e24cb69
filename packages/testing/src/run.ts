import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program to its end with a time limit and never throws on a failing exit: the test
 * asserts on the code and shows stderr. Node 24 (this process's) comes first on PATH, so
 * `#!/usr/bin/env node` bins and pnpm scripts run on the pinned runtime.
 */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs: number },
): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: runEnv(options.env), timeout: options.timeoutMs, maxBuffer: 64 * 1024 * 1024, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr: error && code === null ? `${stderr}\n${error.message}` : stderr });
      },
    );
  });
}

export function runEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_') && !name.startsWith('npm_') && name !== 'TEST_DATABASE_URL'),
  );
  return { ...inherited, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`, ...extra };
}

/** Starts a long-running program and resolves with the first stdout line that `match` accepts. */
export function startUntil(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number; match: (line: string) => boolean },
): Promise<{ child: ChildProcess; line: string; output: () => string }> {
  const child = spawn(command, args, { cwd: options.cwd, env: runEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no matching line within ${options.timeoutMs} ms:\n${output}`));
    }, options.timeoutMs);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      output += `${line}\n`;
      if (options.match(line)) {
        clearTimeout(timer);
        resolve({ child, line, output: () => output });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before a matching line:\n${output}`));
    });
  });
}

/** Sends SIGTERM and waits for the exit code, killing it outright past the time limit. */
export function stop(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}
