import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

test('svc --help lists the commands and the global options, exit 0', async (t) => {
  const run = await runCli(['--help']);
  t.is(run.code, 0);
  for (const text of ['health', 'version', '--base-url', '--api-url', '--token', '--json']) t.true(run.stdout.includes(text), text);
});

test('svc health reads SVC_BASE_URL and prints the database state', async (t) => {
  const run = await runCli(['health'], { env: { SVC_BASE_URL: svc.baseUrl } });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, new RegExp(`^ok  svc \\S+  database ${svc.database.kind} ok`));
});

test('svc health --json prints the health document', async (t) => {
  const run = await runCli(['--base-url', svc.baseUrl, 'health', '--json']);
  t.is(run.code, 0, run.stderr);
  const body = JSON.parse(run.stdout);
  t.is(body.status, 'ok');
  t.is(body.database.status, 'ok');
});

test('svc version prints the CLI and the server versions', async (t) => {
  const run = await runCli(['version', '--json'], { env: { SVC_BASE_URL: svc.baseUrl } });
  t.is(run.code, 0, run.stderr);
  const body = JSON.parse(run.stdout);
  t.is(body.cli, body.server.version);
  t.is(body.server.api_version, '1.7.2');
  const offline = await runCli(['version'], { env: { SVC_BASE_URL: 'http://127.0.0.1:9' } });
  t.is(offline.code, 0);
  t.regex(offline.stdout, /server: unreachable/);
});

test('exit codes: 2 for usage errors, 1 for failures', async (t) => {
  const usage = await runCli(['--no-such-flag']);
  t.is(usage.code, 2);
  t.regex(usage.stderr, /unknown option/);
  const unknownCommand = await runCli(['frobnicate']);
  t.is(unknownCommand.code, 2);
  const unreachable = await runCli(['health', '--base-url', 'http://127.0.0.1:9']);
  t.is(unreachable.code, 1);
  t.regex(unreachable.stderr, /Cannot reach http:\/\/127\.0\.0\.1:9\/healthz/);
});

test('a server error reaches the user with its code and request id', async (t) => {
  const run = await runCli(['--base-url', svc.baseUrl, '--token', 'wrong-token-value', 'health']);
  t.is(run.code, 0, 'health is public; a wrong token does not matter there');
  const client = svc.client({ token: 'wrong' });
  const error = await t.throwsAsync(client.models.list());
  t.is((error as { code?: string }).code, 'invalid_token');
  t.regex((error as { requestId?: string }).requestId ?? '', /^req_/);
});
