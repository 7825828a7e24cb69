/**
 * Portkey's open-source gateway (`@portkey-ai/gateway`, a root devDependency) as a process of the
 * bench's own tree: its published `build/start-server.js` (what its `start:node` script and its
 * `bin` run) with `--port=<port> --headless`, NODE_ENV=production (no console UI, no log stream).
 * It serves every provider from one address; a call names its provider in headers:
 * `x-portkey-provider: openai` and `x-portkey-custom-host: <an OpenAI-compatible base URL>`
 * send it to our upstream, with the caller's `authorization` passed on.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';

export interface PortkeyGateway {
  /** Its OpenAI-compatible base URL (`http://127.0.0.1:<port>/v1`). */
  url: string;
  pid: number;
  /** The headers that send a call through it to `upstreamUrl`. */
  headers: Record<string, string>;
  /** CPU µs its main thread (the JavaScript one, as svc's worker thread is measured) has spent so far. */
  cpuMicros(): number;
  close(): Promise<void>;
}

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

function startScript(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@portkey-ai/gateway/package.json')), 'build', 'start-server.js');
}

/** A free loopback port: Portkey takes a port number only, and prints `localhost:<port>` even for 0. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts the gateway, on `core` when given (`taskset -c`, the whole process), and resolves once it
 * says it is ready; rejects with its own output when it exits first or is not ready in 30 s.
 */
export async function startPortkey(upstreamUrl: string, core?: number): Promise<PortkeyGateway> {
  const script = startScript();
  const port = await freePort();
  const command = [process.execPath, script, `--port=${port}`, '--headless'];
  const child: ChildProcess = spawn(core === undefined ? command[0]! : 'taskset', core === undefined ? command.slice(1) : ['-c', String(core), ...command], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A bench that dies (an uncaught error in one of its threads) takes the gateway with it.
  const orphaned = () => child.kill('SIGKILL');
  process.once('exit', orphaned);
  child.once('exit', () => process.off('exit', orphaned));
  let output = '';
  const keep = (chunk: Buffer) => {
    // Kept to explain a failed start; bounded, since a running gateway may log per request.
    if (output.length < 16_384) output += chunk.toString('utf8');
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('not ready within 30 s')), 30_000);
      const watch = () => {
        if (!output.includes('Ready for connections')) return;
        clearTimeout(timer);
        resolve();
      };
      child.stdout!.on('data', watch);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`exited with ${code ?? signal} before it was ready`));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`Portkey's gateway (${script}): ${(error as Error).message}${output ? `; its output: ${output.trim().slice(-2000)}` : ''}`);
  }
  // Portkey (hono/node-server) now listens; the spawned process is node itself even under taskset (which execs it).
  const pid = child.pid!;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    pid,
    headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': upstreamUrl },
    cpuMicros: () => {
      // Fields 14 and 15 (utime, stime) of the main thread's stat, after the parenthesised command name.
      const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS_PER_SECOND;
    },
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
