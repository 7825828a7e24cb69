import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

let svc: TestServer;
let env: Record<string, string>;

test.before(async () => {
  svc = await startTestServer();
  env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken };
});
test.after.always(async () => {
  await svc?.close();
});

test("svc models get <id> shows one model; --json prints the OpenAI Model object with svc's fields", async (t) => {
  const run = await runCli(['models', 'get', 'svc-extractive-chat'], { env });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /^id\s+svc-extractive-chat$/m);
  t.regex(run.stdout, /^engine\s+builtin \(owned by svc\)$/m);
  t.regex(run.stdout, /^tasks\s+chat$/m);
  const json = await runCli(['--json', 'models', 'get', 'svc-extractive-chat'], { env });
  t.is(json.code, 0, json.stderr);
  t.like(JSON.parse(json.stdout), { id: 'svc-extractive-chat', object: 'model', owned_by: 'svc', engine: 'builtin' });
});

test('svc models get of an unknown id fails with model_not_found, HTTP 404; svc models still lists', async (t) => {
  const missing = await runCli(['models', 'get', 'no-such-model'], { env });
  t.is(missing.code, 1);
  t.regex(missing.stderr, /model_not_found, HTTP 404/);
  const list = await runCli(['models'], { env });
  t.is(list.code, 0, list.stderr);
  t.regex(list.stdout, /^MODEL\s+ENGINE/);
  // `svc models list` as gh and the openai CLI spell it: the same table.
  const listed = await runCli(['models', 'list'], { env });
  t.is(listed.code, 0, listed.stderr);
  t.is(listed.stdout, list.stdout);
});
