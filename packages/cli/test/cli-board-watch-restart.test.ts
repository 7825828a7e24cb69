import { spawn } from 'node:child_process';
import test from 'ava';
import { freePort } from '@svc/testing/free-port';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { CLI_BIN } from './helpers/run-cli.ts';

/**
 * `svc board watch KEY` follows the channel's push stream through a restart of its server: a post
 * made while that server is down (on another server of the same database, a replica) is printed
 * once the server is back, exactly once, between the posts before and after.
 */
let database: TestDatabase;
let watched: TestServer | undefined;
test.after.always(async () => {
  await watched?.close();
  await database?.drop();
});

test('board watch prints a post made during a server restart exactly once', async (t) => {
  database = await createTestDatabase();
  const port = await freePort();
  // The backstop poll is a minute: what arrives within the test's time was pushed.
  const env = { SVC_PORT: String(port), SVC_BLACKBOARD_WATCH_POLL_MS: '60000' };
  watched = await startTestServer({ database, env });
  const key = 'cli:restart';
  t.timeout(180_000);
  // Starting after a known post makes the start independent of how fast the process comes up.
  const zero = await watched.client().blackboard.put({ body: { key, value: { text: 'zero, before the cursor' } } });
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  const child = spawn(process.execPath, [CLI_BIN, 'board', 'watch', key, '--since', zero.created_at, '--since-id', zero.id, '--json', '--max', '3'], {
    env: { ...inherited, SVC_BASE_URL: watched.baseUrl, SVC_API_URL: watched.apiUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const kill = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const waiting: Array<() => void> = [];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const check of waiting.splice(0)) check();
  });
  /** Resolves once `count` lines are printed; rejects if the watch ends first. */
  const printed = (count: number) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (stdout.split('\n').filter(Boolean).length >= count) resolve();
        else waiting.push(check);
      };
      void exited.then((code) => reject(new Error(`the watch exited (${code}) having printed ${stdout}\nstderr: ${stderr}`)));
      check();
    });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  try {
    const first = printed(1);
    await watched.client().blackboard.put({ body: { key, value: { text: 'before' } } });
    await first;
    await watched.close();
    watched = undefined;
    // Down: another server of the same database takes the post.
    const replica = await startTestServer({ database });
    await replica.client().blackboard.put({ body: { key, value: { text: 'during' } } });
    await replica.close();
    watched = await startTestServer({ database, env });
    await printed(2);
    await watched.client().blackboard.put({ body: { key, value: { text: 'after' } } });
    t.is(await exited, 0, stderr);
  } finally {
    clearTimeout(kill);
    child.kill('SIGKILL');
  }
  const texts = stdout
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { item: { text: string } }).item.text);
  t.deepEqual(texts, ['before', 'during', 'after'], stderr);
  t.regex(stderr, /stream interrupted .*; reconnecting in/);
});
