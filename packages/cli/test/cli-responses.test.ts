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

test('svc responses get shows a stored response; --json prints the Response object; delete removes it', async (t) => {
  const created = await svc.operator.responses.create({ body: { model: 'svc-extractive-chat', input: 'How do I post on the blackboard?' } });
  if (!('id' in created)) return t.fail('expected a JSON answer');
  const shown = await runCli(['responses', 'get', created.id], { env });
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, new RegExp(`^id\\s+${created.id}$`, 'm'));
  t.regex(shown.stdout, /^status\s+completed$/m);
  t.regex(shown.stdout, /^model\s+svc-extractive-chat$/m);
  const json = await runCli(['--json', 'responses', 'get', created.id], { env });
  t.is(json.code, 0, json.stderr);
  t.like(JSON.parse(json.stdout), { id: created.id, object: 'response', status: 'completed' });
  const deleted = await runCli(['--json', 'responses', 'delete', created.id], { env });
  t.is(deleted.code, 0, deleted.stderr);
  t.deepEqual(JSON.parse(deleted.stdout), { id: created.id, object: 'response.deleted', deleted: true });
  const gone = await runCli(['responses', 'get', created.id], { env });
  t.is(gone.code, 1);
  t.regex(gone.stderr, /response_not_found, HTTP 404/);
});
