import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deriveChannelKey } from '@svc/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

let svc: TestServer;
let env: Record<string, string>;
test.before(async () => {
  svc = await startTestServer();
  env = { SVC_BASE_URL: svc.baseUrl, SVC_API_URL: svc.apiUrl };
});
test.after.always(async () => {
  await svc?.close();
});

test('put from an argument prints the id and the edit token once, and says where to keep it', async (t) => {
  const run = await runCli(
    ['blackboard', 'put', 'hello', 'from', 'the', 'cli', '--key', 'cli:one', '--topic', 'found', '--topic', 'result', '--kind', 'result'],
    { env },
  );
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /^posted bb_[0-9a-f]{24} under cli:one\nedit token: bbt_\S+\n$/);
  t.regex(run.stderr, /shown only this once.*tombstone.*Keep it private/s);
  const id = /posted (bb_[0-9a-f]{24})/.exec(run.stdout)![1]!;
  const shown = await runCli(['board', 'show', id, '--json'], { env });
  t.is(shown.code, 0, shown.stderr);
  const item = JSON.parse(shown.stdout);
  t.is(item.item.text, 'hello from the cli');
  t.deepEqual(item.item.topics, ['found', 'result']);
  t.is(item.item.kind, 'result');
});

test('put from stdin and from a file, with --key-from and --task; get KEY lists them', async (t) => {
  const fromStdin = await runCli(['board', 'put', '--key-from', 'Sort these tickets', '--task', 'support', '--json'], {
    env,
    input: 'first line\nsecond line\n',
  });
  t.is(fromStdin.code, 0, fromStdin.stderr);
  const created = JSON.parse(fromStdin.stdout);
  t.is(created.key, deriveChannelKey('sort these tickets', 'support'));
  t.is(created.item.task, 'tickets');
  t.is(created.item.text, 'first line\nsecond line');
  t.regex(created.edit_token, /^bbt_/);
  const file = path.join(tmpdir(), `svc-cli-post-${process.pid}.txt`);
  await writeFile(file, 'from a file');
  const fromFile = await runCli(['board', 'put', '--file', file, '--key', created.key, '--reply-to', created.id], { env });
  t.is(fromFile.code, 0, fromFile.stderr);
  const listed = await runCli(['blackboard', 'get', created.key], { env });
  t.is(listed.code, 0, listed.stderr);
  const lines = listed.stdout.trim().split('\n');
  t.is(lines.length, 2);
  t.regex(lines[0]!, /from a file$/);
  t.regex(lines[1]!, /first line$/);
  const json = JSON.parse((await runCli(['board', 'get', created.key, '--limit', '1', '--json'], { env })).stdout);
  t.true(json.has_more);
  t.truthy(json.history_next);
  const replies = JSON.parse((await runCli(['board', 'query', '--parent-id', created.id, '--json'], { env })).stdout);
  t.is(replies.items.length, 1);
});

test('channels, query and tombstone; errors carry their code and exit 1; usage errors exit 2', async (t) => {
  const put = JSON.parse((await runCli(['board', 'put', 'retract me', '--key', 'cli:tomb', '--topic', 'hold', '--json'], { env })).stdout);
  const channels = await runCli(['board', 'channels', '--topic', 'hold'], { env });
  t.is(channels.code, 0, channels.stderr);
  t.regex(channels.stdout, /^cli:tomb {2}1 post {2}1 participant {2}/);
  const query = JSON.parse((await runCli(['board', 'query', '--topic', 'hold', '--json'], { env })).stdout);
  t.deepEqual(
    query.items.map((item: { id: string }) => item.id),
    [put.id],
  );
  const wrong = await runCli(['board', 'tombstone', put.id, '--edit-token', 'bbt_nope'], { env });
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /blackboard_edit_token_invalid, HTTP 403, request req_/);
  const done = await runCli(['board', 'tombstone', put.id], { env: { ...env, SVC_BLACKBOARD_EDIT_TOKEN: put.edit_token } });
  t.is(done.code, 0, done.stderr);
  t.regex(done.stdout, /^tombstoned bb_/);
  const gone = await runCli(['board', 'show', put.id], { env });
  t.is(gone.code, 1);
  t.regex(gone.stderr, /blackboard_item_not_found/);
  t.is((await runCli(['board', 'put', 'no key'], { env })).code, 2);
  t.is((await runCli(['board', 'put', 'x', '--key', 'k', '--kind', 'shout'], { env })).code, 2);
  t.is((await runCli(['board', 'get', 'k', '--limit', 'many'], { env })).code, 2);
  const conflict = await runCli(['board', 'query', '--since', new Date().toISOString(), '--before', new Date().toISOString()], { env });
  t.is(conflict.code, 1);
  t.regex(conflict.stderr, /blackboard_cursor_conflict:since_before/);
  const help = await runCli(['board', '--help']);
  for (const command of ['channels', 'get', 'put', 'query', 'tombstone', 'show', 'watch']) t.true(help.stdout.includes(command), command);
});

test('watch streams new posts as JSON lines', async (t) => {
  await svc.client().blackboard.put({ body: { key: 'cli:watch', value: { text: 'zero, before the cursor' } } });
  // Resuming from a cursor makes the start independent of how fast the process comes up.
  const since = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 5));
  const watching = runCli(['board', 'watch', 'cli:watch', '--since', since, '--max', '2', '--json'], { env, timeoutMs: 40_000 });
  await svc.client().blackboard.put({ body: { key: 'cli:watch', value: { text: 'one' } } });
  await svc.client().blackboard.put({ body: { key: 'cli:watch', value: { text: 'two' } } });
  const run = await watching;
  t.is(run.code, 0, run.stderr);
  const lines = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.deepEqual(
    lines.map((line) => line.item.text),
    ['one', 'two'],
  );
  t.regex(run.stderr, /watching cli:watch/);
});
