import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

/** `svc jobs ...` as a process against a real server: submit, wait with progress, status, result, cancel. */
let svc: TestServer;
let idle: TestServer;
let env: Record<string, string>;
const directory = mkdtempSync(path.join(tmpdir(), 'svc-jobs-cli-'));
const itemsFile = path.join(directory, 'items.jsonl');

test.before(async () => {
  // `idle` runs no jobs, so a submitted one stays queued for the cancel test.
  [svc, idle] = await Promise.all([startTestServer(), startTestServer({ env: { SVC_JOBS_WORKERS: '0' } })]);
  env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken };
  writeFileSync(itemsFile, '{"expression":"6*7"}\n\n{"expression":"nope(1)"}\n');
});
test.after.always(async () => {
  await Promise.all([svc?.close(), idle?.close()]);
});

test("svc jobs submit --wait prints each item's result, with a progress line on stderr", async (t) => {
  const run = await runCli(['jobs', 'submit', '--op', 'calculate', '--item', '{"expression":"2^10"}', '--file', itemsFile, '--wait'], { env });
  t.is(run.code, 0, run.stderr);
  const [first, second, third] = run.stdout.trim().split('\n');
  t.deepEqual(JSON.parse(first!.replace(/^0 ok /, '')), { expression: '2^10', value: 1024 });
  t.deepEqual(JSON.parse(second!.replace(/^1 ok /, '')), { expression: '6*7', value: 42 });
  t.is(third, '2 failed calculate_invalid: The expression is not plain arithmetic: the function nope is not allowed.');
  t.regex(run.stderr, /job_\S+ completed calculate items 3\/3 \(1 failed\) attempts 1\/3/);
});

test('svc jobs submit --json, then status, wait and result --json; the same key submits nothing new', async (t) => {
  const submit = await runCli(
    ['jobs', 'submit', '--op', 'validate_json', '--item', '{"schema":{"type":"integer"},"document":"x"}', '--idempotency-key', 'cli-key-1', '--json'],
    { env },
  );
  t.is(submit.code, 0, submit.stderr);
  const job = JSON.parse(submit.stdout) as { job_id: string; status: string };
  t.is(job.status, 'queued');
  const again = await runCli(
    ['jobs', 'submit', '--op', 'validate_json', '--item', '{"schema":{"type":"integer"},"document":"x"}', '--idempotency-key', 'cli-key-1', '--json'],
    { env },
  );
  t.is(JSON.parse(again.stdout).job_id, job.job_id);
  const waited = await runCli(['jobs', 'wait', job.job_id, '--json'], { env });
  t.is(waited.code, 0, waited.stderr);
  t.is(JSON.parse(waited.stdout).status, 'completed');
  const status = await runCli(['jobs', 'status', job.job_id], { env });
  t.regex(status.stdout, /completed validate_json items 1\/1 attempts 1\/3\n {2}item 0 succeeded/);
  const result = await runCli(['jobs', 'result', job.job_id, '--json'], { env });
  t.like(JSON.parse(result.stdout), { status: 'completed', items: [{ index: 0, status: 'succeeded', result: { valid: false } }] });
});

test('svc jobs cancel a queued job; wait then exits 1; bad input is a usage error', async (t) => {
  const idleEnv = { SVC_BASE_URL: idle.baseUrl, SVC_TOKEN: idle.operatorToken };
  const submit = await runCli(['jobs', 'submit', '--op', 'calculate', '--item', '{"expression":"1"}', '--json'], { env: idleEnv });
  const { job_id: jobId } = JSON.parse(submit.stdout) as { job_id: string };
  const cancel = await runCli(['jobs', 'cancel', jobId], { env: idleEnv });
  t.is(cancel.code, 0, cancel.stderr);
  t.regex(cancel.stdout, new RegExp(`^${jobId} cancelled`));
  const waited = await runCli(['jobs', 'wait', jobId], { env: idleEnv });
  t.is(waited.code, 1);
  const result = await runCli(['jobs', 'result', jobId], { env: idleEnv });
  t.is(result.code, 1);
  t.regex(result.stderr, /job_cancelled/);
  t.is((await runCli(['jobs', 'submit', '--op', 'chat', '--item', '{}'], { env })).code, 2);
  t.is((await runCli(['jobs', 'submit', '--op', 'calculate'], { env })).code, 2);
  t.is((await runCli(['jobs', 'submit', '--op', 'calculate', '--item', '{nope'], { env })).code, 2);
});

test('svc jobs list --json prints a page of my jobs, newest first; --all walks every page as JSON lines', async (t) => {
  // An agent of its own on the server that runs nothing: its two queued jobs are the whole list.
  const agent = await signInAgent(idle, 'jobs:read jobs:write');
  const env = { SVC_BASE_URL: idle.baseUrl, SVC_TOKEN: agent.session.accessToken };
  const submitted: string[] = [];
  for (const expression of ['1+1', '2+2']) {
    const run = await runCli(['jobs', 'submit', '--op', 'calculate', '--item', JSON.stringify({ expression }), '--json'], { env });
    t.is(run.code, 0, run.stderr);
    submitted.push((JSON.parse(run.stdout) as { job_id: string }).job_id);
  }
  const list = await runCli(['jobs', 'list', '--json'], { env });
  t.is(list.code, 0, list.stderr);
  const page = JSON.parse(list.stdout) as { object: string; data: Array<{ job_id: string; created_at: string }>; has_more: boolean };
  t.is(page.object, 'list');
  t.deepEqual(
    page.data.map((job) => job.job_id),
    [...submitted].reverse(),
    'newest first',
  );
  t.false(page.has_more);

  const walked = await runCli(['jobs', 'list', '--all', '--limit', '1', '--json'], { env });
  t.is(walked.code, 0, walked.stderr);
  t.deepEqual(
    walked.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { job_id: string }).job_id),
    [submitted[1]],
  );
  const every = await runCli(['jobs', 'list', '--all', '--json'], { env });
  t.is(every.stdout.trim().split('\n').length, 2);
  const human = await runCli(['jobs', 'list', '--limit', '1'], { env });
  t.regex(human.stdout, /^ID\s+STATUS\s+OPERATION\s+ITEMS\s+CREATED\n/);
  t.regex(human.stdout, /more: --cursor \S+ \(or --all\)/);
  const bad = await runCli(['jobs', 'list', '--status', 'sleeping'], { env });
  t.not(bad.code, 0);
  t.regex(bad.stderr, /unknown status sleeping/);
});
