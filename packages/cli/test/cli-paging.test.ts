import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { createKey, signInAgent } from '@svc/testing/identity';
import { runCli } from './helpers/run-cli.ts';

/** `--all` and `--limit` on the CLI's list commands, as a process against a real server. */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_DEVELOPER_KEYS_MAX_ACTIVE: '200', SVC_CATALOG_DEMO: 'on' } });
});
test.after.always(async () => {
  await svc?.close();
});

const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test('svc keys list --all walks past one page (more than 100 keys); --limit caps the total', async (t) => {
  const agent = await signInAgent(svc);
  const created: string[] = [];
  for (let index = 0; index < 103; index++) created.push((await createKey(agent.client, ['models:read'], `key ${index}`)).credential.credential_id);
  const newestFirst = [...created].reverse();
  const env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: agent.session.accessToken };

  const all = await runCli(['keys', 'list', '--all', '--json'], { env });
  t.is(all.code, 0, all.stderr);
  t.deepEqual(
    jsonLines(all.stdout).map((key) => key.credential_id),
    newestFirst,
    'one JSON object per line, every key, newest first',
  );

  const human = await runCli(['keys', 'list', '--all'], { env });
  t.is(human.code, 0, human.stderr);
  const lines = human.stdout.trim().split('\n');
  t.is(lines.length, 103);
  t.true(lines[0]!.startsWith(`${newestFirst[0]}  active  key 102  models:read  `));

  const capped = await runCli(['keys', 'list', '--all', '--limit', '101', '--json'], { env });
  t.is(capped.code, 0, capped.stderr);
  t.deepEqual(
    jsonLines(capped.stdout).map((key) => key.credential_id),
    newestFirst.slice(0, 101),
  );

  const page = await runCli(['keys', 'list', '--limit', '100', '--json'], { env });
  t.is(page.code, 0, page.stderr);
  const body = JSON.parse(page.stdout) as { data: unknown[]; has_more: boolean; next_cursor: string };
  t.is(body.data.length, 100, 'without --all, --limit is the page size and the page object is printed');
  t.true(body.has_more);

  const tooBig = await runCli(['keys', 'list', '--limit', '101'], { env });
  t.is(tooBig.code, 2);
  t.regex(tooBig.stderr, /--limit must be an integer from 1 to 100 \(with --all, any number of 1 or more\)/);
  const zero = await runCli(['keys', 'list', '--all', '--limit', '0'], { env });
  t.is(zero.code, 2);
  t.regex(zero.stderr, /--limit must be a whole number of 1 or more/);

  const receipts = await runCli(['keys', 'receipts', created[0]!, '--all', '--json'], { env });
  t.is(receipts.code, 0, receipts.stderr);
  t.deepEqual(
    jsonLines(receipts.stdout).map((receipt) => receipt.event),
    ['created'],
  );
});

test('svc board get|query|channels --all stream every item as lines or JSON lines; search and artifact files too', async (t) => {
  const client = svc.client();
  const key = 'cli-paging:walk';
  const posted: string[] = [];
  for (let index = 0; index < 5; index++) posted.push((await client.blackboard.put({ body: { key, value: { text: `walk ${index}` } } })).id);
  const env = { SVC_BASE_URL: svc.baseUrl, SVC_API_URL: svc.apiUrl };

  const got = await runCli(['board', 'get', key, '--all', '--json'], { env });
  t.is(got.code, 0, got.stderr);
  t.deepEqual(
    jsonLines(got.stdout).map((item) => item.id),
    [...posted].reverse(),
  );

  const queried = await runCli(['board', 'query', '--key', key, '--all', '--limit', '3'], { env });
  t.is(queried.code, 0, queried.stderr);
  const lines = queried.stdout.trim().split('\n');
  t.is(lines.length, 3);
  t.true(lines[0]!.includes(posted[4]!) && lines[0]!.endsWith('walk 4'));

  const channels = await runCli(['board', 'channels', '--q', 'walk', '--all', '--json'], { env });
  t.is(channels.code, 0, channels.stderr);
  t.deepEqual(
    jsonLines(channels.stdout).map((channel) => channel.key),
    [key],
  );

  const whole = await client.catalog.search({ query: { limit: 100 } });
  const search = await runCli(['search', '--all', '--json'], { env });
  t.is(search.code, 0, search.stderr);
  t.deepEqual(
    jsonLines(search.stdout).map((row) => row.id),
    whole.rows.map((row) => row.id),
  );
  const two = await runCli(['search', '--all', '--limit', '2'], { env });
  t.is(two.stdout.trim().split('\n').length, 2);
  t.true(two.stdout.startsWith(`${whole.rows[0]!.id}  `));

  const artifactId = whole.rows[0]!.id;
  const files = await client.catalog.files({ params: { id: artifactId }, query: { limit: 500 } });
  const walked = await runCli(['artifact', 'files', artifactId, '--all', '--json'], { env });
  t.is(walked.code, 0, walked.stderr);
  t.deepEqual(
    jsonLines(walked.stdout).map((file) => file.path),
    files.rows.map((file) => file.path),
  );
});
