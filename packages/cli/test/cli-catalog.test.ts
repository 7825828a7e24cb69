import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { runCli } from './helpers/run-cli.ts';

let svc: TestServer;
let env: Record<string, string>;
let storageHost: string;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
  env = { SVC_BASE_URL: svc.baseUrl };
  storageHost = new URL(svc.apiUrl).host;
});
test.after.always(async () => {
  await svc?.close();
});

test('svc search with filters, explain and --json', async (t) => {
  const run = await runCli(['search', 'prompt', 'injection', '--explain'], { env });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /^ID\s+TYPE\s+LICENSE/);
  t.regex(run.stdout, /prompt-injection-rules/);
  t.regex(run.stdout, /full-text rank/);
  const json = await runCli(['search', '--type', 'dataset', '--summary', '--json'], { env });
  const body = JSON.parse(json.stdout);
  t.deepEqual(
    body.rows.map((row: any) => row.id),
    ['support-tickets-sample'],
  );
  t.is(body.summary.total, 1);
  const semantic = await runCli(['search', 'sentiment', 'lexicon', '--semantic', '--json'], { env });
  t.is(JSON.parse(semantic.stdout).rows[0].id, 'tiny-sentiment-lexicon');
  const bad = await runCli(['search', '--type', 'spaceship'], { env });
  t.is(bad.code, 2);
  t.regex(bad.stderr, /Allowed choices are model, adapter/);
});

test('svc artifact show, versions, files, plan', async (t) => {
  const show = await runCli(['artifact', 'show', 'tiny-sentiment-lexicon'], { env });
  t.is(show.code, 0, show.stderr);
  t.regex(show.stdout, /Tiny sentiment lexicon \(tiny-sentiment-lexicon\)/);
  t.regex(show.stdout, /latest revision v2/);
  const versions = await runCli(['artifact', 'versions', 'tiny-sentiment-lexicon'], { env });
  t.regex(versions.stdout, /v2\s+yes\s+3/);
  const files = await runCli(['artifact', 'files', 'tiny-sentiment-lexicon', '--tool', 'onnxruntime', '--json'], { env });
  t.deepEqual(
    JSON.parse(files.stdout).rows.map((row: any) => row.path),
    ['lexicon.tsv', 'model-card.json'],
  );
  const plan = await runCli(['artifact', 'plan', 'prompt-injection-rules'], { env });
  t.regex(plan.stdout, /prompt-injection-rules revision 2026\.10: 2 files/);
  const missing = await runCli(['artifact', 'show', 'nope'], { env });
  t.is(missing.code, 1);
  t.regex(missing.stderr, /artifact_not_found, HTTP 404/);
});

test('svc download from a loopback server trusts its own store by default and says so; --strict-storage refuses it, nothing written', async (t) => {
  const out = await mkdtemp(path.join(tmpdir(), 'svc-cli-dl-'));
  const trusted = await runCli(['download', 'support-tickets-sample', 'tickets.csv', '--out', path.join(out, 'trusted')], { env });
  t.is(trusted.code, 0, trusted.stderr);
  t.regex(trusted.stderr, new RegExp(`trusting the loopback server's own store ${svc.apiUrl.replace(/[.]/g, '\\.')}/api/storage/`));
  t.deepEqual(await readdir(path.join(out, 'trusted')), ['tickets.csv']);
  const strict = await runCli(['download', 'support-tickets-sample', '--out', path.join(out, 'data'), '--strict-storage'], { env });
  t.is(strict.code, 1);
  t.regex(strict.stdout, /FAILED tickets\.csv \[storage-host\]/);
  t.regex(strict.stdout, /--storage-host/);
  t.notRegex(strict.stderr, /trusting/);
  t.deepEqual(await readdir(out), ['trusted']);
});

test('svc download that fails after creating its directory leaves no empty directory behind', async (t) => {
  // A server whose signed URLs point at a port nothing listens on: the fetch fails after the
  // destination directory was made.
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const deadHost = `127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise((resolve) => closed.close(resolve));
  const broken = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on', SVC_PUBLIC_API_URL: `http://${deadHost}` } });
  t.teardown(() => broken.close());
  const out = await mkdtemp(path.join(tmpdir(), 'svc-cli-dl-'));
  const run = await runCli(
    ['download', 'tiny-sentiment-lexicon', '--out', path.join(out, 'nested', 'data'), '--storage-host', deadHost, '--allow-http-loopback', '--json'],
    { env: { SVC_BASE_URL: broken.baseUrl } },
  );
  t.is(run.code, 1);
  const summary = JSON.parse(run.stdout);
  t.deepEqual([...new Set(summary.failures.map((failure: any) => failure.check))], ['fetch-status']);
  t.deepEqual(await readdir(out), [], 'neither the destination nor its parent is left');
});

test('svc download: full verified flow against the built-in store, digests summarised, trending moves', async (t) => {
  const out = await mkdtemp(path.join(tmpdir(), 'svc-cli-dl-'));
  const trendingBefore =
    JSON.parse((await runCli(['trending', '--window', '24h', '--json'], { env })).stdout).rows.find((row: any) => row.artifact.id === 'tiny-sentiment-lexicon')
      ?.pulls ?? 0;
  const run = await runCli(['download', 'tiny-sentiment-lexicon', '--out', out, '--storage-host', storageHost, '--allow-http-loopback'], { env });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /tiny-sentiment-lexicon revision v2: 3 verified, 0 failed/);
  const plan = await svc.client().catalog.downloadPlan({ params: { id: 'tiny-sentiment-lexicon' } });
  for (const file of plan.files) {
    const bytes = await readFile(path.join(out, ...file.path.split('/')));
    t.is(createHash('sha256').update(bytes).digest('hex'), file.sha256, file.path);
    t.true(run.stdout.includes(file.sha256), `summary lists ${file.path}`);
  }
  // Not a terminal: plain progress lines on stderr.
  t.regex(run.stderr, /downloading lexicon\.tsv \(\d+ B\)/, 'a human size: 438 B');
  t.regex(run.stderr, /verified lexicon\.tsv sha256:[0-9a-f]{64} \(client-attested\)/);
  const trending = JSON.parse((await runCli(['trending', '--window', '24h', '--json'], { env })).stdout);
  t.is(trending.rows.find((row: any) => row.artifact.id === 'tiny-sentiment-lexicon').pulls, trendingBefore + 3);
  const rankings = await runCli(['rankings', 'most-downloaded', '--limit', '1'], { env });
  t.regex(rankings.stdout, /1\s+3\s+tiny-sentiment-lexicon/);
});

test('svc download: chosen paths, SVC_STORAGE_HOSTS, --json summary; an unknown path fails with exit 1', async (t) => {
  const out = await mkdtemp(path.join(tmpdir(), 'svc-cli-dl-'));
  const run = await runCli(['download', 'prompt-injection-rules', 'rules.jsonl', '--out', out, '--allow-http-loopback', '--json'], {
    env: { ...env, SVC_STORAGE_HOSTS: `example.test,${storageHost}` },
  });
  t.is(run.code, 0, run.stderr);
  const summary = JSON.parse(run.stdout);
  t.true(summary.ok);
  t.deepEqual(
    summary.files.map((file: any) => [file.path, file.status]),
    [['rules.jsonl', 'client-attested']],
  );
  t.deepEqual(await readdir(out), ['rules.jsonl']);
  const unknown = await runCli(
    ['download', 'prompt-injection-rules', 'nope.txt', '--out', out, '--storage-host', storageHost, '--allow-http-loopback', '--json'],
    { env },
  );
  t.is(unknown.code, 1);
  t.is(JSON.parse(unknown.stdout).failures[0].check, 'plan');
});
