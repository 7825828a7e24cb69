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
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const runExample = (token?: string) => run(process.execPath, [MAIN], { env: runEnv({ SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: token }), timeout: 60_000 });

test('the openai client example chats, streams and embeds against svc with a developer key', async (t) => {
  const agent = await signInAgent(svc);
  const { secret } = await createKey(agent.client, ['inference:invoke'], 'openai example');
  const { stdout } = await runExample(secret);
  t.regex(stdout, /^chat \(svc-extractive-chat, [1-9]\d* tokens\): \S/m);
  const stream = /^stream: (\d+) chunks, finish stop, [1-9]\d* tokens, same text as the plain answer: true$/m.exec(stdout);
  t.truthy(stream, stdout);
  t.true(Number(stream![1]) > 1, 'the answer arrives in more than one chunk');
  t.regex(stdout, /^embeddings: 2 vectors of 512, 512 dimensions, [1-9]\d* prompt tokens$/m);
});

test('the example also runs with the operator token', async (t) => {
  const { stdout } = await runExample(svc.operatorToken);
  t.regex(stdout, /^embeddings: 2 vectors of 512, 512 dimensions/m);
});

test('without a token it stops before calling and says what to set', async (t) => {
  const error = await t.throwsAsync<Error & { code: number; stderr: string }>(runExample(undefined));
  t.is(error!.code, 2);
  t.regex(error!.stderr, /set SVC_TOKEN/);
});
