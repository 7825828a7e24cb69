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

test('svc responses webhook-deliveries lists deliveries newest first, a page at a time; --json --all one object a line; --limit past the contract is a usage error', async (t) => {
  // Two deliveries as the server records them (their sending is tested in packages/server/test/responses-webhooks.test.ts).
  await svc.server.deps.database.sequelize.query(
    `INSERT INTO svc_webhook_deliveries (id, owner, event_type, response_id, url, payload, status, attempts, last_status, last_error, created_at, delivered_at) VALUES
       ('evt_older', 'operator', 'response.failed', 'resp_older', 'https://hooks.example/x', '{}', 'failed', 3, 503, 'HTTP 503', now() - interval '1 minute', NULL),
       ('evt_newer', 'operator', 'response.completed', 'resp_newer', 'https://hooks.example/x', '{}', 'delivered', 1, 200, NULL, now(), now())`,
  );
  const page = await runCli(['responses', 'webhook-deliveries', '--limit', '1'], { env });
  t.is(page.code, 0, page.stderr);
  t.regex(page.stdout, /^evt_newer\s+response\.completed\s+resp_newer\s+delivered\s+1\s+200\s/m);
  t.notRegex(page.stdout, /evt_older/);
  t.regex(page.stdout, /^more: --cursor \S+ \(or --all\)$/m);
  const all = await runCli(['--json', 'responses', 'webhook-deliveries', '--all'], { env });
  t.is(all.code, 0, all.stderr);
  const lines = all.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { id: string; status: string; last_error: string | null });
  t.deepEqual(
    lines.map((line) => [line.id, line.status, line.last_error]),
    [
      ['evt_newer', 'delivered', null],
      ['evt_older', 'failed', 'HTTP 503'],
    ],
  );
  t.false('payload' in (lines[0] as object));
  const edge = await runCli(['responses', 'webhook-deliveries', '--limit', '100'], { env });
  t.is(edge.code, 0, edge.stderr);
  const past = await runCli(['responses', 'webhook-deliveries', '--limit', '101'], { env });
  t.is(past.code, 2);
  t.regex(past.stderr, /--limit must be .*100/);
});
