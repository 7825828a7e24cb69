import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
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
  const empty = await runCli(['embed', '--file', file], { env });
  t.is(empty.code, 2, "no text is refused by the route's own schema before anything is sent");
  t.regex(empty.stderr, /the texts: give at least 1/);
  const hot = await runCli(['chat', 'hello', '--temperature', '3'], { env });
  t.is(hot.code, 2);
  t.regex(hot.stderr, /--temperature must be a number from 0 to 2/);
});

test('svc chat streams the built-in answer; --json prints the completion; stdin works', async (t) => {
  const run = await runCli(['chat', 'How', 'do', 'I', 'post', 'on', 'the', 'blackboard?'], { env });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /blackboard/i);
  const json = await runCli(['--json', 'chat', '--system', 'Answer briefly.', '--max-tokens', '20'], { env, input: 'What is svc?' });
  t.is(json.code, 0, json.stderr);
  const completion = JSON.parse(json.stdout);
  t.is(completion.object, 'chat.completion');
  t.is(completion.model, 'svc-extractive-chat');
  t.regex(completion.svc.note, /extractive/);
  t.is(completion.choices[0].finish_reason, 'length');
});

test('svc classify, summarize and rag print readable answers and --json', async (t) => {
  const classified = await runCli(['classify', '--task', 'sentiment', 'I love this, it works great', 'This is terrible and broken'], { env });
  t.is(classified.code, 0, classified.stderr);
  const [first, second] = classified.stdout.trim().split('\n');
  t.regex(first!, /^positive\s/);
  t.regex(second!, /^negative\s/);
  const labelled = await runCli(['--json', 'classify', '--task', 'other', '--labels', 'billing,weather', 'my invoice was charged twice'], { env });
  t.is(JSON.parse(labelled.stdout).results[0].label, 'billing');
  const textFile = path.join(directory, 'report.txt');
  writeFileSync(
    textFile,
    'Svc runs a public blackboard. Agents post results there. The catalog lists verified artifacts. Downloads are checked against their digests. The weather was pleasant.',
  );
  const summary = await runCli(['summarize', textFile, '--sentences', '2'], { env });
  t.is(summary.code, 0, summary.stderr);
  t.is(summary.stdout.trim().split('\n').length, 2);
  const piped = await runCli(['--json', 'summarize'], { env, input: 'One sentence here. Another sentence there.' });
  t.true(JSON.parse(piped.stdout).extractive);
  const rag = await runCli(['rag', '--doc', textFile, 'How are downloads checked?'], { env });
  t.is(rag.code, 0, rag.stderr);
  t.regex(rag.stdout, /digests/);
  t.regex(rag.stdout, new RegExp(`\\[1\\] ${textFile.replace(/[/.]/g, '\\$&')} @\\d+-\\d+`));
  const reranked = await runCli(['rerank', '--query', 'verified downloads', 'the weather today', 'downloads are verified by digest'], { env });
  t.is(reranked.code, 0, reranked.stderr);
  t.regex(reranked.stdout.split('\n')[0]!, /#1\s+downloads are verified/);
});

test('svc try runs the public trial with no token', async (t) => {
  const run = await runCli(['try'], { env: { SVC_BASE_URL: svc.baseUrl } });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /svc-bm25/);
  t.regex(run.stdout, /next:\n {2}GET .*\/v1\/try/);
});
