import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
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
  env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: 'cli-receipts-bearer' };
  storageHost = new URL(svc.apiUrl).host;
});
test.after.always(async () => {
  await svc?.close();
});

/** `token` names the caller: the same caller's repeat pull within a day is the same record, so tests that compare records use their own. */
async function download(extra: string[], token = env.SVC_TOKEN!) {
  const out = await mkdtemp(path.join(tmpdir(), 'svc-cli-receipts-'));
  return runCli(
    ['download', 'support-tickets-sample', 'tickets.csv', '--out', out, '--storage-host', storageHost, '--allow-http-loopback', '--json', ...extra],
    { env: { ...env, SVC_TOKEN: token } },
  );
}

test('svc download --post-receipt posts the completion receipt, verified, once per record', async (t) => {
  const run = await download(['--post-receipt', 'receipts:cli-download'], 'cli-post-receipt-bearer');
  t.is(run.code, 0, run.stderr);
  const summary = JSON.parse(run.stdout);
  const [file] = summary.files;
  t.regex(file.receipt, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.true(file.post.receipt_verified);
  t.like(file.post.receipt_verification, { kind: 'download-completion', record_id: file.recordId });
  // The same pull again is the same record: the post is answered, not repeated.
  const again = JSON.parse((await download(['--post-receipt', 'receipts:cli-download'], 'cli-post-receipt-bearer')).stdout);
  t.is(again.files[0].post.id, file.post.id);
  t.true(again.files[0].post.deduplicated);
  const board = await runCli(['board', 'get', 'receipts:cli-download'], { env });
  t.regex(board.stdout, /\(receipt verified: download-completion\)/);
  t.is(board.stdout.trim().split('\n').length, 1);
});

test.serial('svc download --post-receipt while posting is paused: files verified and kept, receipts reported not posted, exit 1', async (t) => {
  await svc.operator.blackboard.setPosting({ body: { enabled: false, reason: 'maintenance' } });
  try {
    const out = await mkdtemp(path.join(tmpdir(), 'svc-cli-paused-'));
    const run = await runCli(
      [
        'download',
        'support-tickets-sample',
        'README.md',
        '--out',
        out,
        '--storage-host',
        storageHost,
        '--allow-http-loopback',
        '--post-receipt',
        'receipts:paused',
      ],
      { env },
    );
    t.is(run.code, 1);
    t.regex(run.stdout, /README\.md\s+[0-9a-f]{64}/);
    t.regex(run.stdout, /NOT POSTED the receipt of README\.md: .*paused/i);
    t.regex(run.stderr, /could not be posted; the files are verified and in place/);
    t.true((await readFile(path.join(out, 'README.md'))).length > 0);
  } finally {
    await svc.operator.blackboard.setPosting({ body: { enabled: true } });
  }
});

test('svc verify checks a receipt given inline, as a file, or in a saved answer; --jwks needs no server', async (t) => {
  const saved = JSON.parse((await download([])).stdout);
  const receipt: string = saved.files[0].receipt;
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-cli-verify-'));
  const receiptFile = path.join(directory, 'receipt.jws');
  const answerFile = path.join(directory, 'completion.json');
  await writeFile(receiptFile, `${receipt}\n`);
  await writeFile(answerFile, JSON.stringify({ completion: { receipt } }));

  const inline = await runCli(['verify', receipt], { env });
  t.is(inline.code, 0, inline.stderr);
  t.regex(inline.stdout, /^valid: download-completion \d+, issued by http:\/\/127\.0\.0\.1:\d+/);
  t.regex(inline.stdout, /sha256: [0-9a-f]{64}/);
  for (const argument of [receiptFile, answerFile]) {
    const run = await runCli(['verify', argument, '--json'], { env });
    t.is(run.code, 0, run.stderr);
    t.like(JSON.parse(run.stdout), { valid: true, kind: 'download-completion', record_id: saved.files[0].recordId });
  }

  // Offline: the keys saved once, the server stopped being asked (its URL points nowhere).
  const keys = await runCli(['receipts', 'keys'], { env });
  const jwksFile = path.join(directory, 'jwks.json');
  await writeFile(jwksFile, keys.stdout);
  const offline = await runCli(['verify', receiptFile, '--jwks', jwksFile, '--issuer', svc.baseUrl, '--json'], { env: { SVC_BASE_URL: 'http://127.0.0.1:9' } });
  t.is(offline.code, 0, offline.stderr);
  t.true(JSON.parse(offline.stdout).valid);

  const [header, payload, signature] = receipt.split('.');
  const altered = `${header}.${payload}.${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}`;
  const refused = await runCli(['verify', altered, '--jwks', jwksFile, '--issuer', svc.baseUrl, '--json'], { env });
  t.is(refused.code, 1);
  t.like(JSON.parse(refused.stdout), { valid: false, check: 'signature' });
  const otherIssuer = await runCli(['verify', receipt, '--jwks', jwksFile, '--issuer', 'https://other.example'], { env });
  t.is(otherIssuer.code, 1);
  t.regex(otherIssuer.stdout, /NOT VALID \[issuer\]/);
  const notAReceipt = await runCli(['verify', path.join(directory, 'missing.jws')], { env });
  t.is(notAReceipt.code, 2);
  t.regex(notAReceipt.stderr, /neither a receipt/);
});

test('svc board put --receipt attaches a receipt; the server decides receipt_verified', async (t) => {
  const saved = JSON.parse((await download([])).stdout);
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-cli-put-'));
  const receiptFile = path.join(directory, 'receipt.jws');
  await writeFile(receiptFile, saved.files[0].receipt);
  const put = await runCli(['board', 'put', 'I pulled the tickets sample', '--key', 'receipts:cli-put', '--receipt', receiptFile, '--json'], { env });
  t.is(put.code, 0, put.stderr);
  const body = JSON.parse(put.stdout);
  t.true(body.receipt_verified);
  t.deepEqual(body.item.receipt, { jws: saved.files[0].receipt });
  t.regex(put.stderr, /receipt verified: download-completion/);
  const show = await runCli(['board', 'show', body.id], { env });
  t.regex(show.stdout, /receipt verified by svc: download-completion/);

  const [header, payload] = saved.files[0].receipt.split('.');
  await writeFile(receiptFile, `${header}.${payload}.${'A'.repeat(86)}`);
  const forged = await runCli(['board', 'put', 'trust me', '--key', 'receipts:cli-put', '--receipt', receiptFile, '--json'], { env });
  t.is(forged.code, 0, forged.stderr);
  t.false('receipt_verified' in JSON.parse(forged.stdout));
  t.regex(forged.stderr, /did not verify here/);
});
