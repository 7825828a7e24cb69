import test from 'ava';
import { MAX_USAGE_REPORT_DAYS } from '@svc/schemas';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

/**
 * `svc keys report` as a process: the operator's usage report (GET /v1/developer/usage) as JSON
 * and as tables, the range's flags checked against the contract before any call, and a key that
 * is not the operator's refused by the server.
 */
let svc: TestServer;
let env: Record<string, string>;
test.before(async () => {
  svc = await startTestServer();
  env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken };
});
test.after.always(async () => {
  await svc?.close();
});

const today = () => new Date().toISOString().slice(0, 10);
const daysBefore = (day: string, count: number) => new Date(Date.parse(`${day}T00:00:00Z`) - count * 86_400_000).toISOString().slice(0, 10);

test.serial('svc keys report prints the range per day, per model and per key; --json prints the answer; --from widens it', async (t) => {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['models:read', 'inference:invoke'], 'report \u001b]0;title\u0007 key');
  // The rows the server sums, as its usage hook writes them when calls end (keys-usage-report.test.ts makes them from real calls).
  const insert = (day: string, model: string, requests: number, credits: number) =>
    svc.server.database.sequelize.query(
      `INSERT INTO svc_developer_key_usage (credential_id, day, model, requests, prompt_tokens, completion_tokens, total_tokens, credits)
       VALUES (:id, :day, :model, :requests, 10, 5, 15, :credits)`,
      { replacements: { id: key.credential.credential_id, day, model, requests, credits } },
    );
  await insert(today(), 'answer-a', 3, 4);
  await insert(today(), 'answer-b', 2, 0);
  await insert(daysBefore(today(), 40), 'answer-a', 7, 1);

  const json = await runCli(['--json', 'keys', 'report'], { env });
  t.is(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout) as {
    from: string;
    to: string;
    totals: { requests: number };
    by_model: { model: string }[];
    by_key: { name: string }[];
  };
  t.like(report, { from: daysBefore(today(), 29), to: today(), totals: { requests: 5 } });
  t.deepEqual(
    report.by_model.map((model) => model.model),
    ['answer-a', 'answer-b'],
  );
  t.is(report.by_key[0]!.name, 'report \u001b]0;title\u0007 key');

  const text = await runCli(['keys', 'report'], { env });
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, new RegExp(`^${daysBefore(today(), 29)} to ${today()} \\(UTC days, both included\\): 5 requests, 30 tokens, 4 credits$`, 'm'));
  t.regex(text.stdout, /^DAY\s+REQUESTS\s+TOKENS\s+CREDITS$/m);
  t.regex(text.stdout, new RegExp(`^${today()}\\s+5\\s+30\\s+4$`, 'm'));
  t.regex(text.stdout, /^MODEL\s+REQUESTS\s+TOKENS\s+CREDITS$/m);
  t.regex(text.stdout, /^answer-a\s+3\s+15\s+4\nanswer-b\s+2\s+15\s+0$/m);
  t.regex(text.stdout, /^KEY\s+NAME\s+OWNER\s+REQUESTS\s+TOKENS\s+CREDITS$/m);
  t.true(text.stdout.includes(`${key.credential.credential_id}  report ^[]0;title^G key  ${agent.id}`), text.stdout);
  t.false(text.stdout.includes('\u001b'), 'the key name its owner chose reaches the terminal shown, not acted on');

  const wide = await runCli(['--json', 'keys', 'report', '--from', daysBefore(today(), 40), '--to', today()], { env });
  t.is(wide.code, 0, wide.stderr);
  t.is((JSON.parse(wide.stdout) as { totals: { requests: number } }).totals.requests, 12);

  const empty = await runCli(['keys', 'report', '--from', '2020-01-01', '--to', '2020-01-31'], { env });
  t.is(empty.code, 0, empty.stderr);
  t.regex(empty.stdout, /^2020-01-01 to 2020-01-31 .*: 0 requests, 0 tokens, 0 credits\nNo key was used in this range\.$/m);
});

test('a bad day or a range past the most is a usage error (exit 2) naming the flag; a key that is not the operator is refused', async (t) => {
  const notADay = await runCli(['keys', 'report', '--from', 'yesterday'], { env });
  t.is(notADay.code, 2);
  t.regex(notADay.stderr, /--from/);
  const tooLong = await runCli(['keys', 'report', '--from', daysBefore(today(), MAX_USAGE_REPORT_DAYS), '--to', today()], { env });
  t.is(tooLong.code, 2);
  t.regex(tooLong.stderr, /--to/);
  t.regex(tooLong.stderr, new RegExp(`${MAX_USAGE_REPORT_DAYS} days`));
  const reversed = await runCli(['keys', 'report', '--from', today(), '--to', daysBefore(today(), 1)], { env });
  t.is(reversed.code, 2);
  t.regex(reversed.stderr, /--from/);

  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['models:read']);
  const refused = await runCli(['keys', 'report'], { env: { ...env, SVC_TOKEN: key.secret } });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /HTTP 40[13]/);
});
