import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startServerBehindProxy } from '@svc/testing/server-behind-proxy';
import type { SilentProxy } from '@svc/testing/silent-proxy';
import type { TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { CLI_BIN, runCli } from './helpers/run-cli.ts';

/**
 * The lock on a partial download file (issue 44): two `svc download` processes of the same file
 * into the same folder. The server's public URL is a proxy that can go silent partway through an
 * object's bytes, so the first download holds its partial file (1 MiB written, the rest not sent)
 * for as long as the test needs, on any machine, without a race on speed.
 */
const MIB = 1024 * 1024;
const ARTIFACT = 'locked-weights';

let svc: TestServer;
let proxy: SilentProxy;
let env: Record<string, string>;
let big: Buffer;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const sizeOf = (file: string) =>
  stat(file).then(
    (info) => info.size,
    () => -1,
  );
const objectFetches = () => proxy.answers.filter((answer) => answer.url.startsWith('/api/storage/'));
const silenceObjectAfter = (afterBytes: number) =>
  proxy.silence({ match: (request) => request.url?.startsWith('/api/storage/') === true, afterBytes, times: 1 });

test.before(async () => {
  big = randomBytes(4 * MIB);
  ({ svc, proxy } = await startServerBehindProxy(ARTIFACT, { 'big.bin': big }));
  env = { SVC_BASE_URL: proxy.url };
});

test.after.always(async () => {
  await proxy?.close();
  await svc?.close();
});

/** Starts `svc download` as a process; answers its pid and its end. */
function startDownload(out: string) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  const child = spawn(process.execPath, [CLI_BIN, 'download', ARTIFACT, 'big.bin', '--out', out], {
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.resume();
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, ended };
}

test.serial('a second svc download of a file another one is writing is refused with exit 75 and touches nothing; the first ends verified', async (t) => {
  // Four CLI processes from the TypeScript sources: minutes on a loaded two-core machine, seconds otherwise.
  t.timeout(600_000);
  const out = await mkdtemp(path.join(tmpdir(), 'svc-lock-'));
  const partial = path.join(out, '.big.bin.svc-partial');
  const rule = silenceObjectAfter(MIB);
  const first = startDownload(out);
  try {
    await waitUntil('the first download to hold 1 MiB', async () => (await sizeOf(partial)) === MIB, { timeoutMs: 150_000 });
    const fetchesBefore = objectFetches().length;

    const second = await runCli(['download', ARTIFACT, 'big.bin', '--out', out], { env, timeoutMs: 150_000 });
    t.is(second.code, 75, second.stderr);
    t.regex(second.stdout, /FAILED big\.bin \[locked\]: .*another download \(pid \d+ on [^,]+, since [^)]+\) is writing this file/);
    t.regex(second.stderr, /1 file\(s\) are being written by another download into .*; run the same command again once it ends/);
    const json = await runCli(['download', ARTIFACT, 'big.bin', '--out', out, '--json'], { env, timeoutMs: 150_000 });
    t.is(json.code, 75, json.stderr);
    t.like(JSON.parse(json.stdout), { ok: false, files: [], failures: [{ path: 'big.bin', check: 'locked' }] });

    t.is(objectFetches().length, fetchesBefore, 'the refused downloads fetched no object bytes');
    t.is(await sizeOf(partial), MIB, 'the partial is as the first download left it');
    t.true((await readFile(partial)).equals(big.subarray(0, MIB)));
    t.deepEqual((await readdir(out)).sort(), ['.big.bin.svc-partial', '.big.bin.svc-partial.json', '.big.bin.svc-partial.lock']);
  } finally {
    proxy.release(rule);
  }
  const ended = await first.ended;
  t.is(ended.code, 0, ended.stderr);
  t.true((await readFile(path.join(out, 'big.bin'))).equals(big), 'the published file is the planned one');
  t.is(sha256(await readFile(path.join(out, 'big.bin'))), sha256(big));
  t.deepEqual(await readdir(out), ['big.bin'], 'no partial, record or lock left');
});

test.serial('the lock of a download killed with SIGKILL is taken over: the next run resumes its partial', async (t) => {
  t.timeout(600_000);
  const out = await mkdtemp(path.join(tmpdir(), 'svc-lock-stale-'));
  const partial = path.join(out, '.big.bin.svc-partial');
  const rule = silenceObjectAfter(MIB);
  const first = startDownload(out);
  try {
    await waitUntil('the first download to hold 1 MiB', async () => (await sizeOf(partial)) === MIB, { timeoutMs: 150_000 });
    first.child.kill('SIGKILL');
    t.is((await first.ended).signal, 'SIGKILL');
  } finally {
    proxy.release(rule);
  }
  const lock = JSON.parse(await readFile(`${partial}.lock`, 'utf8')) as { pid: number };
  t.is(lock.pid, first.child.pid ?? -1, 'the killed process left its lock');

  const fetchesBefore = objectFetches().length;
  const next = await runCli(['download', ARTIFACT, 'big.bin', '--out', out], { env, timeoutMs: 150_000 });
  t.is(next.code, 0, next.stderr);
  // The pull may already be on record (the same client and file within the server's window): either way it is attested.
  t.regex(next.stderr, /verified big\.bin sha256:[0-9a-f]{64} \(resumed, (client-attested|already-recorded)\)/);
  t.deepEqual(
    objectFetches()
      .slice(fetchesBefore)
      .map((answer) => [answer.range, answer.status]),
    [[`bytes=${MIB}-`, 206]],
  );
  t.true((await readFile(path.join(out, 'big.bin'))).equals(big));
  t.deepEqual(await readdir(out), ['big.bin']);
});
