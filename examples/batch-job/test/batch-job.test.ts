import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runEnv } from '@svc/testing/run';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const run = promisify(execFile);
let svc: TestServer;
let key: string;
test.before(async () => {
  svc = await startTestServer();
  const agent = await signInAgent(svc);
  key = (await createKey(agent.client, ['jobs:write', 'jobs:read'], 'batch example')).secret;
});
test.after.always(async () => {
  await svc?.close();
});

// One at a time: every test submits as the same key, and svc runs at most 2 active jobs per
// principal (429 jobs_active_limit past it); on a slow machine the jobs of tests run side by side overlap.
const runExample = (args: string[], token = key) =>
  run(process.execPath, [MAIN, ...args], { env: runEnv({ SVC_BASE_URL: svc.baseUrl, SVC_API_URL: svc.apiUrl, SVC_TOKEN: token }), timeout: 60_000 });

test.serial('the batch job example submits, waits and prints one outcome per item, a failing item on its own', async (t) => {
  const { stdout } = await runExample(['2^10', 'sqrt(16) + 1', '1/0']);
  const lines = stdout.trim().split('\n');
  const submitted = /^submitted (job_\S+) \(queued, 3 items\)$/.exec(lines[0]!);
  t.truthy(submitted, stdout);
  const jobId = submitted![1]!;
  t.deepEqual(lines.slice(1), [
    `finished ${jobId}: completed, 2 succeeded, 1 failed`,
    'item 0: 2^10 = 1024',
    'item 1: sqrt(16) + 1 = 5',
    'item 2: 1/0 failed: calculate_not_finite',
  ]);
  t.is((await svc.client({ token: key }).jobs.get({ params: { job_id: jobId } })).status, 'completed', 'the job the example printed is the one svc ran');
});

test.serial('rerun with the same --key: the first job comes back, none is queued twice', async (t) => {
  const idempotencyKey = `example-${crypto.randomUUID()}`;
  const first = await runExample(['--key', idempotencyKey, '6*7']);
  const again = await runExample(['--key', idempotencyKey, '6*7']);
  const idOf = (stdout: string) => /^submitted (job_\S+)/.exec(stdout)![1];
  t.is(idOf(again.stdout), idOf(first.stdout));
  t.regex(again.stdout, /^item 0: 6\*7 = 42$/m);
});

test.serial('an expression the whitelist refuses fails as its own item, with its code', async (t) => {
  const { stdout } = await runExample(['a = 1']);
  t.regex(stdout, /^item 0: a = 1 failed: calculate_invalid$/m);
});

test.serial('8 items (the limit) run; 9 are refused: the example prints the stable code and exits 1', async (t) => {
  const eight = await runExample(Array.from({ length: 8 }, (_, index) => `${index}+1`));
  t.regex(eight.stdout, /: completed, 8 succeeded, 0 failed$/m);
  t.regex(eight.stdout, /^item 7: 7\+1 = 8$/m);
  const error = await t.throwsAsync<Error & { code: number; stderr: string; stdout: string }>(
    runExample(Array.from({ length: 9 }, (_, index) => `${index}+1`)),
  );
  t.is(error!.code, 1);
  t.regex(error!.stderr, /^error: 422 validation_failed: /m);
  t.is(error!.stdout, '', 'nothing was submitted');
});
