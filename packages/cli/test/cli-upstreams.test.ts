import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { createKey, signInAgent } from '@svc/testing/identity';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

/** `svc upstreams health` against a server with one model on two deployments, one of them rate limited. */
let database: TestDatabase;
let svc: TestServer;
const fakes: FakeUpstream[] = [];
let env: Record<string, string>;

test.before(async () => {
  for (let index = 0; index < 2; index++) fakes.push(await startFakeOpenAiUpstream());
  database = await createTestDatabase();
  const file = path.join(database.dataDir, 'models.json');
  await writeFile(
    file,
    JSON.stringify({
      upstreams: fakes.map((fake, index) => ({ id: `region-${index}`, base_url: fake.baseUrl })),
      models: [
        {
          id: 'team-chat',
          upstream_model: 'answer-team',
          capabilities: ['chat'],
          deployments: [
            { upstream: 'region-0', weight: 3 },
            { upstream: 'region-1', max_in_flight: 8 },
          ],
        },
      ],
    }),
  );
  svc = await startTestServer({ database, env: { SVC_MODELS_FILE: file } });
  env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken };
});
test.after.always(async () => {
  await svc?.close();
  await database?.drop();
  for (const fake of fakes) await fake.close();
});

test('svc upstreams health lists each deployment, --json and text; a key without the operator token is refused', async (t) => {
  fakes[1]!.setOutage({ status: 429, retryAfter: '60' });
  // Until region-1 was tried once: its 429 is retried on region-0, and it cools down for 60 s.
  for (let call = 0; call < 60 && fakes[1]!.requests.length === 0; call++) {
    const answer = await fetch(`${svc.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}` },
      body: JSON.stringify({ model: 'team-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    t.is(answer.status, 200);
  }
  const json = await runCli(['--json', 'upstreams', 'health'], { env });
  t.is(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout) as { scope: string; data: Array<Record<string, unknown>> };
  t.is(report.scope, 'process');
  t.like(report.data[0], { model: 'team-chat', upstream: 'region-0', weight: 3, state: 'healthy', max_in_flight: null });
  t.like(report.data[1], { model: 'team-chat', upstream: 'region-1', weight: 1, state: 'cooling_down', max_in_flight: 8, failures: 1 });

  const text = await runCli(['upstreams', 'health'], { env });
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /^MODEL\s+DEPLOYMENT\s+STATE\s+WEIGHT\s+IN FLIGHT\s+ERRORS \(RECENT\)\s+P50\s+P95\s+COOLDOWN UNTIL$/m);
  t.regex(text.stdout, /^team-chat\s+region-0\/answer-team\s+healthy\s+3\s+0\s+0\.0% of \d+\s+\d+ ms\s+\d+ ms\s+-$/m);
  t.regex(text.stdout, /^team-chat\s+region-1\/answer-team\s+cooling_down\s+1\s+0\/8\s+100\.0% of 1\s+\d+ ms\s+\d+ ms\s+\d{4}-\d\d-\d\dT[\d:.]+Z$/m);

  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['models:read']);
  const refused = await runCli(['upstreams', 'health'], { env: { ...env, SVC_TOKEN: key.secret } });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /HTTP 40[13]/);
});
