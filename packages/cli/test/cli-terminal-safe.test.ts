import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { CLI_BIN, runCli } from './helpers/run-cli.ts';

/**
 * Anyone can post to the public board, so a post's text must not drive the terminal of whoever
 * reads it: an OSC title change (`ESC ] 0 ; … BEL`), a screen clear (`ESC [ 2 J`), a carriage return
 * that overwrites the line, and the 8-bit C1 CSI (U+009B). Readable output shows them (`^[`), and
 * `--json` escapes every control character so the value still parses back exactly.
 */
const HOSTILE = 'before\x1b]0;pwned-title\x07 middle \x1b[2J\rover\u009b31m after\u0085end\x7f';
/** What a terminal can act on: ESC, BEL, CR, DEL and every C1 control. */
const ACTIONABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

let svc: TestServer;
let env: Record<string, string>;
let id: string;
test.before(async () => {
  svc = await startTestServer();
  env = { SVC_BASE_URL: svc.baseUrl, SVC_API_URL: svc.apiUrl };
  id = (await svc.client().blackboard.put({ body: { key: 'cli:hostile', value: { text: HOSTILE } } })).id;
});
test.after.always(async () => {
  await svc?.close();
});

test('board get and show print a hostile post with its control characters shown, never sent', async (t) => {
  for (const args of [
    ['board', 'get', 'cli:hostile'],
    ['board', 'show', id],
  ]) {
    const run = await runCli(args, { env });
    t.is(run.code, 0, run.stderr);
    t.false(ACTIONABLE.test(run.stdout), `${args.join(' ')}: ${JSON.stringify(run.stdout)}`);
    t.true(run.stdout.includes('before^[]0;pwned-title^G middle ^[[2J^Mover\\u009b31m after\\u0085end^?'), run.stdout);
  }
});

test('--json escapes every C0 and C1 control character, and the text parses back exactly', async (t) => {
  for (const args of [
    ['board', 'get', 'cli:hostile', '--json'],
    ['board', 'show', id, '--json'],
  ]) {
    const run = await runCli(args, { env });
    t.is(run.code, 0, run.stderr);
    t.false(ACTIONABLE.test(run.stdout.replaceAll('\n', '')), `${args.join(' ')}: raw control characters in the JSON`);
    t.true(run.stdout.includes('\\u009b') && run.stdout.includes('\\u001b'), run.stdout);
    const parsed = JSON.parse(run.stdout);
    const text = parsed.item?.text ?? parsed.items?.[0]?.item?.text ?? parsed.items?.[0]?.text;
    t.is(text, HOSTILE);
  }
});

test('board watch prints a hostile post as it arrives without sending its controls', async (t) => {
  const since = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  const watching = runCli(['board', 'watch', 'cli:hostile-watch', '--since', since, '--max', '1'], { env, timeoutMs: 40_000 });
  await svc.client().blackboard.put({ body: { key: 'cli:hostile-watch', value: { text: HOSTILE } } });
  const run = await watching;
  t.is(run.code, 0, run.stderr);
  t.false(ACTIONABLE.test(run.stdout), JSON.stringify(run.stdout));
  t.true(run.stdout.includes('^[]0;pwned-title^G'), run.stdout);
});

test('under a pseudo-terminal the bytes the terminal gets hold no escape sequence of the post', async (t) => {
  // util-linux `script` gives the CLI a real terminal and records what it writes to it.
  const command = [process.execPath, CLI_BIN, 'board', 'get', 'cli:hostile'].map((word) => `'${word}'`).join(' ');
  const { stdout } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], {
    env: { ...process.env, ...env, TERM: 'xterm-256color' },
    encoding: 'buffer',
  });
  const bytes = stdout as unknown as Buffer;
  t.true(bytes.includes('pwned-title'), bytes.toString('latin1'));
  t.false(bytes.includes(Buffer.from('\x1b]0;')), 'an OSC sequence reached the terminal');
  t.false(bytes.includes(Buffer.from('\x1b[2J')), 'a clear-screen sequence reached the terminal');
  t.false(bytes.includes(0x07), 'a BEL reached the terminal');
  t.false(bytes.includes(Buffer.from('\u009b', 'utf8')), 'a C1 CSI reached the terminal');
});
