import test from 'ava';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

/**
 * `svc keys webhook set|show|remove` as a process: the signing secret printed once to stdout (the
 * reminder on stderr), the endpoint read back without it, a URL that is not https refused by the
 * contract before any call (exit 2 naming --url), a private address refused by the server (exit 1,
 * source_url_refused), and removal repeated harmlessly.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

/** A public address literal: it passes the URL rules with no lookup, and nothing is sent to it here (no response is made with the key). */
const URL_ = 'https://1.1.1.1/svc-hook';

test('set prints the secret once; show and remove; a bad --url is a usage error; a private address is refused', async (t) => {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['inference:invoke']);
  const id = key.credential.credential_id;
  const env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: agent.session.accessToken };

  const set = await runCli(['--json', 'keys', 'webhook', 'set', id, '--url', URL_], { env });
  t.is(set.code, 0, set.stderr);
  const answer = JSON.parse(set.stdout) as { url: string; secret: string; credential_id: string };
  t.like(answer, { url: URL_, credential_id: id });
  t.regex(answer.secret, /^whsec_/);
  t.regex(set.stderr, /shown once/);

  const text = await runCli(['keys', 'webhook', 'set', id, '--url', URL_], { env });
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, new RegExp(`^${id} announces its background responses at ${URL_.replace(/\./g, '\\.')} `, 'm'));
  t.regex(text.stdout, /^whsec_\S+$/m);

  const show = await runCli(['keys', 'webhook', 'show', id], { env });
  t.is(show.code, 0, show.stderr);
  t.true(show.stdout.includes(URL_));
  t.false(show.stdout.includes('whsec_'));

  const insecure = await runCli(['keys', 'webhook', 'set', id, '--url', 'http://1.1.1.1/svc-hook'], { env });
  t.is(insecure.code, 2);
  t.regex(insecure.stderr, /--url/);

  const refused = await runCli(['keys', 'webhook', 'set', id, '--url', 'https://10.0.0.1/hook'], { env });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /source_url_refused|not public unicast/);

  const removed = await runCli(['keys', 'webhook', 'remove', id], { env });
  t.is(removed.code, 0, removed.stderr);
  t.regex(removed.stdout, /webhook removed/);
  const again = await runCli(['keys', 'webhook', 'remove', id], { env });
  t.regex(again.stdout, /had no webhook/);
  const gone = await runCli(['keys', 'webhook', 'show', id], { env });
  t.is(gone.code, 1);
  t.regex(gone.stderr, /no webhook endpoint/);
});

test('svc responses webhook-deliveries --key lists the deliveries to that key’s endpoint only; an agent sees its keys’ alone', async (t) => {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['inference:invoke']);
  const id = key.credential.credential_id;
  // Rows as the server writes them when a response ends (responses-key-webhooks.test.ts makes them from real responses).
  const insert = (delivery: string, credentialId: string | null, owner: string) =>
    svc.server.database.sequelize.query(
      `INSERT INTO svc_webhook_deliveries (id, owner, event_type, response_id, url, payload, credential_id, status, attempts, last_status)
       VALUES (:delivery, :owner, 'response.completed', :response, 'https://1.1.1.1/h', '{}', :credentialId, 'delivered', 1, 200)`,
      { replacements: { delivery, owner, response: `resp_${delivery}`, credentialId } },
    );
  const owner = `principal:agent:${agent.id}`;
  await insert('evt_cli_key', id, owner);
  await insert('evt_cli_operator', null, owner);
  await insert('evt_cli_other', 'dk_someoneelse0000000000', 'principal:agent:someone-else');

  const operator = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken };
  const byKey = await runCli(['--json', 'responses', 'webhook-deliveries', '--key', id, '--all'], { env: operator });
  t.is(byKey.code, 0, byKey.stderr);
  t.deepEqual(
    byKey.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { id: string }).id),
    ['evt_cli_key'],
  );
  const mine = await runCli(['responses', 'webhook-deliveries'], { env: { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: agent.session.accessToken } });
  t.is(mine.code, 0, mine.stderr);
  t.true(mine.stdout.includes('evt_cli_key'));
  t.false(mine.stdout.includes('evt_cli_operator') || mine.stdout.includes('evt_cli_other'));
  const empty = await runCli(['responses', 'webhook-deliveries', '--key', ''], { env: operator });
  t.is(empty.code, 2);
  t.regex(empty.stderr, /--key/);
});
