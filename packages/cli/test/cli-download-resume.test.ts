import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startServerBehindProxy } from '@svc/testing/server-behind-proxy';
import type { SilentProxy } from '@svc/testing/silent-proxy';
import type { TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { CLI_BIN, runCli } from './helpers/run-cli.ts';

/**
 * Resumable, incremental downloads through the CLI as a process (issue 44). The server sits
 * behind @svc/testing's proxy (startServerBehindProxy: its public URL is the proxy's, so the
 * signed URLs point at the proxy, which passes every request on as it came, Host included, so
 * the signatures hold), and the proxy's answers give the Range each object fetch asked and the
 * bytes the store sent. The proxy can also pace the object's bytes, so an interrupt lands partway
 * through a 50 MB file on any machine.
 */
const MIB = 1024 * 1024;
const BIG_BYTES = 50 * MIB;
const ARTIFACT = 'resumable-weights';

let svc: TestServer;
let proxy: SilentProxy;
let env: Record<string, string>;
let big: Buffer;
let small: Buffer;
/** Where the object fetches of the step under test start in the proxy's answers (see `fetches`). */
let fetchesFrom = 0;
const isObjectFetch = (url: string | undefined) => url?.startsWith('/api/storage/') === true;
/** Object fetches the store answered since `startCounting()`, in order: the Range asked, the status and the body bytes sent. */
const fetches = () =>
  proxy.answers
    .slice(fetchesFrom)
    .filter((answer) => isObjectFetch(answer.url))
    .map(({ range, status, bytes }) => ({ range, status, bytes }));
const startCounting = () => {
  fetchesFrom = proxy.answers.length;
};
/** Paces object bodies (bytes per 10 ms), or lets them go at full speed again (undefined). */
const paceObjects = (bytesPerTick: number | undefined) =>
  proxy.pace(bytesPerTick === undefined ? undefined : { match: (request) => isObjectFetch(request.url), bytesPerTick });

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const sentBytes = () => fetches().reduce((sum, fetch) => sum + fetch.bytes, 0);

test.before(async () => {
  big = randomBytes(BIG_BYTES);
  small = Buffer.from('a small file of the same artifact\n'.repeat(100));
  ({ svc, proxy } = await startServerBehindProxy(ARTIFACT, { 'big.bin': big, 'small.txt': small }));
  env = { SVC_BASE_URL: proxy.url };
});

test.after.always(async () => {
  await proxy?.close();
  await svc?.close();
});

const filesIn = async (directory: string) => (await readdir(directory)).sort();

/**
 * Runs `svc download` under a pseudo-terminal (util-linux `script`), as a person at a terminal
 * would, and types Ctrl-C once `ready()` holds. Answers the exit code and every byte the
 * terminal got.
 */
async function runInTerminalAndInterrupt(args: string[], ready: () => Promise<boolean>): Promise<{ code: number | null; terminal: string }> {
  const command = [process.execPath, CLI_BIN, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  const child = spawn('script', ['--quiet', '--flush', '--return', '--command', command, '/dev/null'], {
    env: { ...clean, ...env, TERM: 'xterm-256color', COLUMNS: '100', LINES: '30' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let terminal = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (terminal += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (terminal += chunk));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  try {
    await waitUntil('the download to get partway', ready, { timeoutMs: 90_000, intervalMs: 20 });
    child.stdin.write('\x03'); // Ctrl-C: the terminal sends SIGINT to the foreground process
    const code = await closed;
    return { code, terminal };
  } finally {
    clearTimeout(killer);
    child.stdin.end();
  }
}

test.serial('an interrupted 50 MB download keeps its partial and restores the cursor; the re-run resumes it; a second re-run fetches nothing', async (t) => {
  const out = await mkdtemp(path.join(tmpdir(), 'svc-resume-'));
  const partial = path.join(out, '.big.bin.svc-partial');
  const partialSize = () =>
    stat(partial).then(
      (info) => info.size,
      () => 0,
    );
  startCounting();
  paceObjects(256 * 1024); // about 25 MB/s: the file takes 2 s, the interrupt comes at 10 MB
  const interrupted = await runInTerminalAndInterrupt(['download', ARTIFACT, 'big.bin', '--out', out], async () => (await partialSize()) >= 10 * MIB);
  paceObjects(undefined);
  t.is(interrupted.code, 130, interrupted.terminal);
  t.regex(interrupted.terminal, /interrupted; run the same command to resume/);
  // The progress bar hid the cursor; the last cursor sequence the terminal got shows it again.
  t.true(interrupted.terminal.includes('\x1b[?25l'), 'the bar hid the cursor');
  t.true(interrupted.terminal.lastIndexOf('\x1b[?25h') > interrupted.terminal.lastIndexOf('\x1b[?25l'), 'the cursor is shown again');
  t.deepEqual(await filesIn(out), ['.big.bin.svc-partial', '.big.bin.svc-partial.json'], 'the partial and its record stay; nothing published');
  const held = await partialSize();
  t.true(held >= 10 * MIB && held < BIG_BYTES, `held ${held}`);
  t.true((await readFile(partial)).equals(big.subarray(0, held)), 'the partial is a prefix of the file');
  const firstRunSent = sentBytes();

  // A partial an older version left under a random name goes away with the run.
  await writeFile(path.join(out, '.big.bin.0123456789ab.svc-partial'), 'old');
  startCounting();
  const resumed = await runCli(['download', ARTIFACT, 'big.bin', '--out', out], { env, timeoutMs: 120_000 });
  t.is(resumed.code, 0, resumed.stderr);
  t.deepEqual(
    fetches().map((fetch) => [fetch.range, fetch.status]),
    [[`bytes=${held}-`, 206]],
  );
  const resent = firstRunSent + sentBytes() - BIG_BYTES;
  t.log(
    `first run sent ${(firstRunSent / MIB).toFixed(1)} MiB, kept ${(held / MIB).toFixed(1)} MiB; the re-run sent ${(sentBytes() / MIB).toFixed(1)} MiB; sent again: ${resent} bytes (${((100 * resent) / BIG_BYTES).toFixed(2)}% of the file)`,
  );
  t.true(resent < BIG_BYTES / 10, `sent again ${resent} bytes`);
  t.regex(resumed.stderr, /verified big\.bin sha256:[0-9a-f]{64} \(resumed, client-attested\)/);
  t.deepEqual(await filesIn(out), ['big.bin'], 'verified, published, no partial left');
  t.is(sha256(await readFile(path.join(out, 'big.bin'))), sha256(big));

  startCounting();
  const again = await runCli(['download', ARTIFACT, 'big.bin', '--out', out], { env, timeoutMs: 120_000 });
  t.is(again.code, 0, again.stderr);
  t.regex(again.stderr, /big\.bin: up to date/);
  t.is(sentBytes(), 0);
  t.deepEqual(fetches(), [], 'no object fetch at all');
  t.regex(again.stdout, /0 verified, 0 failed, 1 up to date/);
});

test.serial('SIGTERM during a download keeps the partial, says how to resume and exits 130', async (t) => {
  const out = await mkdtemp(path.join(tmpdir(), 'svc-sigterm-'));
  const partial = path.join(out, '.big.bin.svc-partial');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  paceObjects(256 * 1024);
  const child = spawn(process.execPath, [CLI_BIN, 'download', ARTIFACT, 'big.bin', '--out', out], {
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    await waitUntil('2 MiB of the file on disk', async () => ((await stat(partial).catch(() => undefined))?.size ?? 0) >= 2 * MIB, { timeoutMs: 90_000 });
    child.kill('SIGTERM');
    t.is(await closed, 130, stderr);
  } finally {
    paceObjects(undefined);
    child.kill('SIGKILL');
  }
  t.regex(stderr, /interrupted; run the same command to resume/);
  t.deepEqual(await filesIn(out), ['.big.bin.svc-partial', '.big.bin.svc-partial.json']);
});

test.serial('a corrupted file is reported and replaced; --force fetches an up-to-date file again', async (t) => {
  const out = await mkdtemp(path.join(tmpdir(), 'svc-corrupt-'));
  t.is((await runCli(['download', ARTIFACT, 'small.txt', '--out', out], { env })).code, 0);
  const file = path.join(out, 'small.txt');
  const corrupted = Buffer.from(small);
  corrupted[7] ^= 0x01;
  await writeFile(file, corrupted);
  startCounting();
  const run = await runCli(['download', ARTIFACT, 'small.txt', '--out', out], { env });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stderr, /small\.txt: sha256 differs from the catalog; fetching again/);
  t.true((await readFile(file)).equals(small));
  t.deepEqual(
    fetches().map((fetch) => [fetch.range, fetch.bytes]),
    [[undefined, small.length]],
  );
  startCounting();
  const forced = await runCli(['download', ARTIFACT, 'small.txt', '--out', out, '--force', '--json'], { env });
  t.is(forced.code, 0, forced.stderr);
  t.is(sentBytes(), small.length);
  t.like(JSON.parse(forced.stdout), { ok: true, upToDate: [], files: [{ path: 'small.txt', outcome: 'fetched', transferredBytes: small.length }] });
});

test.serial('a partial of another generation of the object is started over, never spliced', async (t) => {
  const out = await mkdtemp(path.join(tmpdir(), 'svc-generation-'));
  // A partial with a record naming this file but a generation the store no longer has.
  await writeFile(path.join(out, '.small.txt.svc-partial'), 'x'.repeat(100));
  await writeFile(
    path.join(out, '.small.txt.svc-partial.json'),
    JSON.stringify({ artifactId: ARTIFACT, path: 'small.txt', sha256: sha256(small), sizeBytes: small.length, generation: '1', etag: '"1"' }),
  );
  startCounting();
  const run = await runCli(['download', ARTIFACT, 'small.txt', '--out', out], { env });
  t.is(run.code, 0, run.stderr);
  t.deepEqual(
    fetches().map((fetch) => [fetch.range, fetch.status]),
    [[undefined, 200]],
    'the whole object, no Range',
  );
  t.true((await readFile(path.join(out, 'small.txt'))).equals(small));
  t.deepEqual(await filesIn(out), ['small.txt']);
});

test.serial('--check verifies local files without fetching: a line per file, exit 1 when any differs or is missing, --json as data', async (t) => {
  const out = await mkdtemp(path.join(tmpdir(), 'svc-check-'));
  t.is((await runCli(['download', ARTIFACT, 'small.txt', '--out', out], { env })).code, 0);
  startCounting();
  const good = await runCli(['download', ARTIFACT, 'small.txt', '--out', out, '--check'], { env });
  t.is(good.code, 0, good.stderr);
  t.regex(good.stdout, /small\.txt: up to date/);
  const whole = await runCli(['download', ARTIFACT, '--out', out, '--check'], { env });
  t.is(whole.code, 1);
  t.regex(whole.stdout, /big\.bin: missing/);
  t.regex(whole.stdout, /small\.txt: up to date/);
  t.regex(whole.stdout, /1 of 2 up to date/);
  const corrupted = Buffer.from(small);
  corrupted[0] ^= 0x20;
  await writeFile(path.join(out, 'small.txt'), corrupted);
  const json = await runCli(['download', ARTIFACT, '--out', out, '--check', '--json'], { env });
  t.is(json.code, 1);
  const body = JSON.parse(json.stdout);
  t.false(body.ok);
  t.like(
    body.files.find((file: { path: string }) => file.path === 'small.txt'),
    { state: 'differs', expected: { sha256: sha256(small), sizeBytes: small.length }, actual: { sha256: sha256(corrupted), sizeBytes: small.length } },
  );
  t.like(
    body.files.find((file: { path: string }) => file.path === 'big.bin'),
    { state: 'missing' },
  );
  const text = await runCli(['download', ARTIFACT, 'small.txt', '--out', out, '--check'], { env });
  t.regex(text.stdout, /small\.txt: sha256 differs from the catalog/);
  t.deepEqual(fetches(), [], 'nothing fetched');
  t.true((await readFile(path.join(out, 'small.txt'))).equals(corrupted), 'nothing replaced');
});

/** Runs `svc download` to its end under a pseudo-terminal `columns` wide; answers the exit code and every byte the terminal got. */
async function runInTerminal(args: string[], columns: number): Promise<{ code: number | null; terminal: string }> {
  const quoted = [process.execPath, CLI_BIN, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  // stty sets the width as a resized window would.
  const child = spawn('script', ['--quiet', '--flush', '--return', '--command', `stty cols ${columns}; ${quoted}`, '/dev/null'], {
    env: { ...clean, ...env, TERM: 'xterm-256color' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let terminal = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (terminal += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (terminal += chunk));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(killer);
  child.stdin.end();
  return { code, terminal };
}

test.serial(
  'progress on a terminal: human sizes, fitted to the width with the ETA always shown, no ETA 0s, also with --json; --quiet shows none',
  async (t) => {
    const out = await mkdtemp(path.join(tmpdir(), 'svc-progress-'));
    paceObjects(256 * 1024); // about 25 MB/s: the bar is redrawn many times over 2 s
    const run = await runInTerminal(['download', ARTIFACT, '--out', out, '--json', '--concurrency', '1'], 60);
    paceObjects(undefined);
    t.is(run.code, 0, run.terminal);
    // Each redraw starts at column 0 (a carriage return or a cursor move) and erases to the right.
    const frames = run.terminal
      .split(/\r|\x1b\[[0-9;]*[A-Za-z]|\x1b\[\?25[hl]/)
      .map((frame) => frame.replace(/\n/g, ''))
      .filter((frame) => frame.includes('%'));
    t.true(frames.length >= 3, `progress frames: ${JSON.stringify(frames.slice(0, 5))}`);
    for (const frame of frames) {
      t.true([...frame].length < 60, `wider than the terminal: ${JSON.stringify(frame)}`);
      t.regex(frame, / ETA (--|done|<1s|\d+(s|m\d\ds|h\d\dm))/, `no ETA: ${JSON.stringify(frame)}`);
    }
    t.true(
      frames.some((frame) => /\/50\.0 MiB/.test(frame)),
      'sizes in MiB',
    );
    t.false(run.terminal.includes('ETA 0s'), 'never ETA 0s');
    t.false(/\d+\/\d+ B/.test(run.terminal), 'no raw byte counts');
    t.regex(run.terminal, /"artifactId": ?"resumable-weights"/, 'the JSON summary too');

    const quietOut = await mkdtemp(path.join(tmpdir(), 'svc-quiet-'));
    const quiet = await runInTerminal(['download', ARTIFACT, '--out', quietOut, '--quiet'], 60);
    t.is(quiet.code, 0, quiet.terminal);
    t.false(quiet.terminal.includes('ETA'), quiet.terminal);
    t.false(quiet.terminal.includes('verified big.bin'), 'no per-file notices');
    t.regex(quiet.terminal, /2 verified, 0 failed/);
  },
);
