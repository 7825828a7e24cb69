import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { runCli } from './helpers/run-cli.ts';

let svc: TestServer;
let env: Record<string, string>;
const directory = mkdtempSync(path.join(tmpdir(), 'svc-inference-cli-'));

test.before(async () => {
  svc = await startTestServer();
  env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken };
});
test.after.always(async () => {
  await svc?.close();
});

test('svc embed prints one line per text; --json prints the OpenAI-shaped answer', async (t) => {
  const run = await runCli(['embed', 'first text', 'second text', '--dimensions', '8'], { env });
  t.is(run.code, 0, run.stderr);
  const lines = run.stdout.trim().split('\n');
  t.is(lines.length, 2);
  t.regex(lines[0]!, /^0\t8 dims\t\[/);
  const json = await runCli(['--json', 'embed', '--file', '-'], { env, input: 'one\ntwo\n\nthree\n' });
  t.is(json.code, 0, json.stderr);
  const answer = JSON.parse(json.stdout);
  t.is(answer.object, 'list');
  t.is(answer.data.length, 3, 'blank lines are not texts');
  t.is(answer.data[0].embedding.length, 512);
});

test('svc models lists engines and models with their method and defaults', async (t) => {
  const run = await runCli(['models'], { env });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /^MODEL\s+ENGINE\s+METHOD\s+TASKS\s+DEFAULT FOR/);
  t.regex(run.stdout, /svc-hashed-ngrams-512\s+builtin\s+classical\s+embeddings\s+embeddings/);
  const json = await runCli(['--json', 'models'], { env });
  t.true(JSON.parse(json.stdout).data.some((model: { id: string }) => model.id === 'svc-hashed-ngrams-512'));
});

test('an unknown model exits 1 with the stable code; a bad flag exits 2', async (t) => {
  const unknown = await runCli(['--json', 'embed', 'x', '--model', 'nope'], { env });
  t.is(unknown.code, 1);
  t.is(JSON.parse(unknown.stderr).code, 'model_not_found');
  const bad = await runCli(['embed', 'x', '--dimensions', 'many'], { env });
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--dimensions takes a whole number/);
  const noText = await runCli(['rag', 'question'], { env });
  t.is(noText.code, 2, 'rag without --doc is a usage error');
  const file = path.join(directory, 'empty.txt');
  writeFileSync(file, '');
  t.is((await runCli(['embed', '--file', file], { env })).code, 1, 'no text is refused by the server with a clear 422');
});
