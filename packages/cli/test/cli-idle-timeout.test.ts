import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startServerBehindProxy } from '@svc/testing/server-behind-proxy';
import type { SilentProxy } from '@svc/testing/silent-proxy';
import type { TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { CLI_BIN, runCli } from './helpers/run-cli.ts';

/**
 * `--idle-timeout <seconds>` and SVC_IDLE_TIMEOUT (issue 44): how long a download or a streamed
 * answer may go without a byte before the CLI gives up on it (a board watch reconnects). The
 * server sits behind @svc/testing's proxy, which can go silent partway through an answer without
 * closing it, as a stuck load balancer does.
 */
const MIB = 1024 * 1024;
const ARTIFACT = 'idle-timeout-weights';

let svc: TestServer;
let proxy: SilentProxy;
let env: Record<string, string>;

test.before(async () => {
  ({ svc, proxy } = await startServerBehindProxy(ARTIFACT, { 'big.bin': randomBytes(4 * MIB) }));
  env = { SVC_BASE_URL: proxy.url };
});

test.after.always(async () => {
  await proxy?.close();
  await svc?.close();
});

const isObjectFetch = (url: string | undefined) => url?.startsWith('/api/storage/') === true;
const sizeOf = (file: string) =>
  stat(file).then(
    (info) => info.size,
    () => -1,
  );

/** Starts `svc download` of big.bin into `out` as a process; answers its end. */
function startDownload(out: string, args: readonly string[], extraEnv: Readonly<Record<string, string>> = {}) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  const child = spawn(process.execPath, [CLI_BIN, ...args, 'download', ARTIFACT, 'big.bin', '--out', out], {
    env: { ...clean, ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let exited = false;
  const ended = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      exited = true;
      resolve({ code, stdout, stderr });
    }),
  );
  return { child, ended, exited: () => exited };
}

test.serial('a download whose store goes silent ends after --idle-timeout seconds (1 s), keeps its partial, and says how long it waited', async (t) => {
  t.timeout(300_000);
  for (const [how, args, extraEnv] of [
    ['--idle-timeout 1', ['--idle-timeout', '1'], {}],
    ['SVC_IDLE_TIMEOUT=1', [], { SVC_IDLE_TIMEOUT: '1' }],
  ] as const) {
    const out = await mkdtemp(path.join(tmpdir(), 'svc-idle-flag-'));
    const partial = path.join(out, '.big.bin.svc-partial');
    const rule = proxy.silence({ match: (request) => isObjectFetch(request.url), afterBytes: MIB, times: 1 });
    const download = startDownload(out, args, extraEnv);
    try {
      await waitUntil(`${how}: 1 MiB on disk`, async () => (await sizeOf(partial)) === MIB || download.exited(), { timeoutMs: 150_000 });
      const silentSince = Date.now();
      const { code, stdout, stderr } = await download.ended;
      const waited = Date.now() - silentSince;
      t.is(code, 1, `${how}: ${stdout}\n${stderr}`);
      // The client's own words carry the value it was given: 1000 ms, not the default 60 000.
      t.regex(`${stdout}\n${stderr}`, /sent nothing for 1000 ms/, how);
      // It waited about the second it was told to (a loaded machine adds to it; the default would be 60 s).
      t.true(waited < 30_000, `${how}: ended ${waited} ms after the store went silent`);
      t.deepEqual((await readdir(out)).sort(), ['.big.bin.svc-partial', '.big.bin.svc-partial.json'], `${how}: the partial stays to resume`);
    } finally {
      proxy.release(rule);
      download.child.kill('SIGKILL');
    }
  }
});

test.serial('a longer --idle-timeout waits out the same silence, and the download ends verified once the store goes on', async (t) => {
  t.timeout(300_000);
  const out = await mkdtemp(path.join(tmpdir(), 'svc-idle-long-'));
  const partial = path.join(out, '.big.bin.svc-partial');
  const rule = proxy.silence({ match: (request) => isObjectFetch(request.url), afterBytes: MIB, times: 1 });
  const download = startDownload(out, ['--idle-timeout', '120']);
  try {
    await waitUntil('1 MiB on disk', async () => (await sizeOf(partial)) === MIB || download.exited(), { timeoutMs: 150_000 });
    // Three times the silence that ended the downloads above.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    t.false(download.exited(), 'still waiting on the store');
  } finally {
    proxy.release(rule);
  }
  const { code, stdout, stderr } = await download.ended;
  t.is(code, 0, `${stdout}\n${stderr}`);
  t.deepEqual(await readdir(out), ['big.bin']);
});

test.serial('svc board watch with --idle-timeout 1 reconnects when its push stream goes silent', async (t) => {
  t.timeout(300_000);
  const key = 'idle:cli-watch';
  const isWatch = (url: string | undefined) => url?.includes('/blackboard/watch') === true;
  const watchesBefore = proxy.answers.filter((answer) => isWatch(answer.url)).length;
  const rule = proxy.silence({ match: (request) => isWatch(request.url), afterBytes: 0, times: 1 });
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  const child = spawn(process.execPath, [CLI_BIN, '--idle-timeout', '1', 'board', 'watch', key], {
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.resume();
  try {
    await waitUntil('the watch to reconnect', async () => /reconnecting/.test(stderr), { timeoutMs: 120_000 });
    t.regex(stderr, /stream interrupted \(.*sent nothing for 1000 ms.*\); reconnecting/);
    await waitUntil('a second watch request', async () => proxy.answers.filter((answer) => isWatch(answer.url)).length >= watchesBefore + 2, {
      timeoutMs: 60_000,
    });
    t.pass();
  } finally {
    proxy.release(rule);
    child.kill('SIGTERM');
  }
});

test.serial('a bad --idle-timeout or SVC_IDLE_TIMEOUT is a usage error (exit 2) that says what it takes, and nothing is sent', async (t) => {
  const answersBefore = proxy.answers.length;
  for (const [args, extraEnv, typed] of [
    [['--idle-timeout', 'soon'], {}, 'soon'],
    [['--idle-timeout', '-1'], {}, '-1'],
    [['--idle-timeout', '1e9'], {}, '1e9'],
    [[], { SVC_IDLE_TIMEOUT: '' }, ''],
    [[], { SVC_IDLE_TIMEOUT: 'ten' }, 'ten'],
  ] as const) {
    const run = await runCli([...args, 'download', ARTIFACT, 'big.bin', '--out', tmpdir()], { env: { ...env, ...extraEnv } });
    t.is(run.code, 2, run.stderr);
    t.is(
      run.stderr,
      `error: --idle-timeout (or SVC_IDLE_TIMEOUT) takes a number of seconds from 0 to 2147483 (0 turns it off), not ${JSON.stringify(typed)}\n(run with --help for usage)\n`,
    );
  }
  t.is(proxy.answers.length, answersBefore, 'no request reached the server');
  const help = await runCli(['--help']);
  t.regex(help.stdout, /--idle-timeout <seconds>/);
  t.regex(help.stdout, /SVC_IDLE_TIMEOUT/);
});
