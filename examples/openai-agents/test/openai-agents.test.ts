import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { startFakeOpenAiUpstream, toolAnswer, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { createKey, signInAgent } from '@svc/testing/identity';
import { runEnv } from '@svc/testing/run';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const run = promisify(execFile);
let fake: FakeUpstream;
let svc: TestServer;

/** `tool-a` speaks only Chat Completions (svc translates); `resp-a` speaks the Responses API (svc passes it through). */
test.before(async () => {
  fake = await startFakeOpenAiUpstream();
  svc = await startTestServer({ env: { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_MODELS: 'tool-a,resp-a=chat+responses' } });
});
test.after.always(async () => {
  await svc?.close();
  await fake?.close();
});

const runExample = (env: Record<string, string | undefined>) =>
  run(process.execPath, [MAIN], { env: runEnv({ SVC_BASE_URL: svc.baseUrl, ...env }), timeout: 60_000 });

for (const [model, path] of [
  ['tool-a', 'translated to Chat Completions'],
  ['resp-a', 'passed through to /v1/responses'],
] as const) {
  test.serial(`the agent runs its tool and reaches a final output (${path})`, async (t) => {
    const agent = await signInAgent(svc);
    const { secret } = await createKey(agent.client, ['inference:invoke'], 'agents example');
    const { stdout } = await runExample({ SVC_TOKEN: secret, SVC_AGENT_MODEL: model });
    t.regex(stdout, /^tool calls: Paris$/m);
    t.regex(stdout, new RegExp(`^final output: ${toolAnswer('sunny, 21 °C').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    t.regex(stdout, /^last response: resp_[0-9a-f]{48}$/m);
    t.true(fake.requests.some((request) => request.path === (model === 'tool-a' ? '/v1/chat/completions' : '/v1/responses') && request.body.model === model));
  });
}

test('without a token or a model it stops before calling and says what to set', async (t) => {
  const error = await t.throwsAsync<Error & { code: number; stderr: string }>(runExample({ SVC_TOKEN: undefined, SVC_AGENT_MODEL: undefined }));
  t.is(error!.code, 2);
  t.regex(error!.stderr, /set SVC_TOKEN/);
});
