import test from 'ava';
import { CACHE_STATUS_HEADER, RESPONSE_CACHE_NAME } from '@svc/schemas';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

/** `svc cache` and `svc cache purge` against a server whose response cache holds an upstream's answers. */
let svc: TestServer;
let fake: FakeUpstream;
let env: Record<string, string>;

test.before(async () => {
  fake = await startFakeOpenAiUpstream();
  svc = await startTestServer({ env: { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_MODELS: 'embed-a=embeddings' } });
  env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken };
});
test.after.always(async () => {
  await svc?.close();
  await fake?.close();
});

const embed = (input: string) =>
  fetch(`${svc.baseUrl}/v1/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}` },
    body: JSON.stringify({ model: 'embed-a', input }),
  });

test.serial('svc cache reports the response cache; svc cache purge empties it (operator only), --json and text', async (t) => {
  for (const input of ['first text', 'second text', 'first text']) await (await embed(input)).arrayBuffer();
  const report = await runCli(['--json', 'cache'], { env });
  t.is(report.code, 0, report.stderr);
  const cache = (JSON.parse(report.stdout) as { caches: Array<Record<string, unknown>> }).caches.find((entry) => entry.name === RESPONSE_CACHE_NAME);
  t.like(cache, { entries: 2, hits: 1, misses: 2, ttl_seconds: 3600, shared: true });
  const text = await runCli(['cache'], { env });
  t.regex(text.stdout, /^CACHE\s+ENTRIES\s+MAX\s+HITS\s+MISSES\s+HIT RATE\s+BYTES\s+TTL$/m);
  t.regex(text.stdout, /^response-cache\s+2\s+100000\s+1\s+2\s+33\.3%\s+\d+\s+3600 s$/m);

  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['models:read']);
  const refused = await runCli(['cache', 'purge'], { env: { ...env, SVC_TOKEN: key.secret } });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /HTTP 40[13]/);

  const one = await runCli(['--json', 'cache', 'purge', '--model', 'no-such-model'], { env });
  t.is(one.code, 0, one.stderr);
  t.deepEqual(JSON.parse(one.stdout), { name: RESPONSE_CACHE_NAME, purged_entries: 0, purged_bytes: 0 });
  const all = await runCli(['cache', 'purge'], { env });
  t.is(all.code, 0, all.stderr);
  t.regex(all.stdout, /^purged 2 entries \(\d+ bytes\) from response-cache$/m);
  t.is((await embed('first text')).headers.get(CACHE_STATUS_HEADER), 'miss');
});
