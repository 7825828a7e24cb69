import { createHash } from 'node:crypto';
import http from 'node:http';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { changeSignedField, type HostedStorage, signedField, startHostedStorage } from '@svc/testing/hosted-storage';

/** The built-in store; catalog-downloads-s3.test.ts runs this file again against a local S3. */
let storage: HostedStorage;
let svc: TestServer;
test.before(async () => {
  storage = await startHostedStorage();
  svc = await startTestServer({ env: { ...storage.env, SVC_CATALOG_DEMO: 'on', SVC_STORAGE_URL_TTL_SECONDS: '300' } });
});
test.after.always(async () => {
  await svc?.close();
  await storage?.close();
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function pulls(artifactId: string): Promise<number> {
  const artifact = await svc.client().catalog.artifact({ params: { id: artifactId } });
  return artifact.downloads;
}

async function startDownload(artifactId: string, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${svc.apiUrl}/api/downloads/${artifactId}/${path}`, { redirect: 'manual', headers });
  return { response, location: response.headers.get('location') ?? '', token: response.headers.get('x-svc-completion-token') ?? '' };
}

function complete(artifactId: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${svc.apiUrl}/api/download-completions/${artifactId}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
}

/** Raw GET that keeps the path exactly as written (fetch would normalise dot segments). */
function rawGet(path: string): Promise<{ status: number; body: any }> {
  const url = new URL(svc.apiUrl);
  return new Promise((resolve, reject) => {
    http
      .get({ host: url.hostname, port: url.port, path }, (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
      })
      .on('error', reject);
  });
}

test('the download path answers 302 with a V4-style signed Location and a completion token', async (t) => {
  const { response, location, token } = await startDownload('support-tickets-sample', 'tickets.csv');
  t.is(response.status, 302);
  t.regex(token, /^sct_[A-Za-z0-9_-]{43}$/);
  const url = new URL(location);
  t.is(url.host, storage.host ?? new URL(svc.apiUrl).host, `the ${storage.kind} store's host`);
  for (const field of storage.signedFields) t.truthy(signedField(url, field), field);
  t.is(signedField(url, storage.expiresField), '300');
  t.is(response.headers.get('cache-control'), 'no-store');
  const object = await fetch(location);
  t.is(object.status, 200);
  const plan = await svc.client().catalog.downloadPlan({ params: { id: 'support-tickets-sample' } });
  const planned = plan.files.find((file) => file.path === 'tickets.csv')!;
  const bytes = Buffer.from(await object.arrayBuffer());
  t.is(Number(object.headers.get('content-length')), planned.sizeBytes);
  t.is(sha256(bytes), planned.sha256);
});

test('traversal is refused: "..", absolute, encoded and double-encoded', async (t) => {
  for (const path of [
    '../tickets.csv',
    'a/%2e%2e/tickets.csv',
    '%2e%2e%2ftickets.csv',
    '%252e%252e/tickets.csv',
    '/etc/passwd',
    '%2fetc%2fpasswd',
    'a%5c..%5cb',
    './tickets.csv',
  ]) {
    const download = await rawGet(`/api/downloads/support-tickets-sample/${path}`);
    t.is(download.status, 400, path);
    t.is(download.body.code, 'invalid_path', path);
  }
  const completion = await complete('support-tickets-sample', '%2e%2e%2ftickets.csv', { sha256: '0'.repeat(64), sizeBytes: 1, completionToken: 'x' });
  t.is(completion.body.code, 'invalid_path');
  t.is((await rawGet('/api/downloads/support-tickets-sample/nope.bin')).body.code, 'file_not_found');
  t.is((await rawGet('/api/downloads/no-such-artifact/x')).body.code, 'artifact_not_found');
});

test('the store refuses tampered, expired-range, unsigned and other-host URLs on every fetch', async (t) => {
  const { location } = await startDownload('support-tickets-sample', 'README.md');
  t.is((await fetch(location)).status, 200);
  // Objects are named by their path's digest, not the path: the other object's name is its own signed URL's.
  const otherObject = new URL((await startDownload('support-tickets-sample', 'tickets.csv')).location).pathname;
  // Field names without the store's prefix (x-goog- for the built-in store, x-amz- for S3).
  const prefix = storage.expiresField.replace('expires', '');
  const set = (field: string, value?: string) => (url: URL) => changeSignedField(url, field, value);
  const variants: Array<[string, (url: URL) => void, string]> = [
    ['tampered signature', set(`${prefix}signature`, 'f'.repeat(64)), storage.refusals.invalid],
    ['expires changed to 299', set(`${prefix}expires`, '299'), storage.refusals.invalid],
    ['expires 301', set(`${prefix}expires`, '301'), storage.refusals.invalid],
    ['expires 0', set(`${prefix}expires`, '0'), storage.refusals.invalid],
    ['date moved', set(`${prefix}date`, '20200101T000000Z'), storage.refusals[storage.kind === 's3' ? 'expired' : 'invalid']],
    ['generation changed', set('generation', '1'), storage.refusals.invalid],
    ['other object', (url) => (url.pathname = otherObject), storage.refusals.invalid],
    ['signature missing', set(`${prefix}signature`), storage.refusals.invalid],
    ['algorithm missing', set(`${prefix}algorithm`), storage.refusals.invalid],
  ];
  for (const [name, change, code] of variants) {
    const url = new URL(location);
    change(url);
    const response = await fetch(url);
    t.is(response.status, 403, name);
    t.is(await storage.refusalCode(response), code, name);
  }
  // Signed for 127.0.0.1:<port>; the same URL through "localhost" carries another Host header.
  const otherHost = new URL(location);
  otherHost.hostname = 'localhost';
  t.is((await fetch(otherHost)).status, 403);
});

test('an expired signed URL is refused (signed with a 1 s lifetime)', async (t) => {
  const short = await startTestServer({ env: { ...storage.env, SVC_CATALOG_DEMO: 'on', SVC_STORAGE_URL_TTL_SECONDS: '1' } });
  try {
    const response = await fetch(`${short.apiUrl}/api/downloads/support-tickets-sample/README.md`, { redirect: 'manual' });
    const location = response.headers.get('location')!;
    t.is(signedField(new URL(location), storage.expiresField), '1');
    // That the URL works inside its lifetime is proven by the signer's own tests (object-storage);
    // a 1 s window is too short to assert here on a loaded machine.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const expired = await fetch(location);
    t.is(expired.status, 403);
    t.is(await storage.refusalCode(expired), storage.refusals.expired);
  } finally {
    await short.close();
  }
});

test('completion: first client-attested, a repeat by the same caller already-recorded, both localHashAttested', async (t) => {
  const plan = await svc.client().catalog.downloadPlan({ params: { id: 'prompt-injection-rules' } });
  const planned = plan.files.find((file) => file.path === 'rules.jsonl')!;
  const before = await pulls('prompt-injection-rules');
  const caller = { authorization: 'Bearer caller-one' };
  const first = await startDownload('prompt-injection-rules', 'rules.jsonl', caller);
  const attested = await complete('prompt-injection-rules', 'rules.jsonl', {
    sha256: planned.sha256,
    sizeBytes: planned.sizeBytes,
    completionToken: first.token,
  });
  t.is(attested.status, 200);
  t.is(attested.body.status, 'client-attested');
  t.true(attested.body.localHashAttested);
  t.is(await pulls('prompt-injection-rules'), before + 1);
  const second = await startDownload('prompt-injection-rules', 'rules.jsonl', caller);
  const repeat = await complete('prompt-injection-rules', 'rules.jsonl', {
    sha256: `sha256:${planned.sha256.toUpperCase()}`,
    sizeBytes: planned.sizeBytes,
    completionToken: second.token,
  });
  t.is(repeat.body.status, 'already-recorded');
  t.true(repeat.body.localHashAttested);
  t.is(await pulls('prompt-injection-rules'), before + 1, 'a repeat is not counted again');
  const otherCaller = await startDownload('prompt-injection-rules', 'rules.jsonl', { authorization: 'Bearer caller-two' });
  t.is(
    (await complete('prompt-injection-rules', 'rules.jsonl', { sha256: planned.sha256, sizeBytes: planned.sizeBytes, completionToken: otherCaller.token })).body
      .status,
    'client-attested',
  );
  t.is(await pulls('prompt-injection-rules'), before + 2);
});

test('completion refusals record nothing: mismatch, spent, foreign, unknown token, bad body', async (t) => {
  const plan = await svc.client().catalog.downloadPlan({ params: { id: 'svc-hashed-ngrams-512' } });
  const readme = plan.files.find((file) => file.path === 'README.md')!;
  const before = await pulls('svc-hashed-ngrams-512');
  const { token } = await startDownload('svc-hashed-ngrams-512', 'README.md', { authorization: 'Bearer refusals' });

  const wrongDigest = await complete('svc-hashed-ngrams-512', 'README.md', { sha256: 'a'.repeat(64), sizeBytes: readme.sizeBytes, completionToken: token });
  t.is(wrongDigest.status, 409);
  t.is(wrongDigest.body.code, 'completion_digest_mismatch');
  t.regex(wrongDigest.body.error, new RegExp(`expected sha256 ${readme.sha256}`));
  const wrongSize = await complete('svc-hashed-ngrams-512', 'README.md', { sha256: readme.sha256, sizeBytes: readme.sizeBytes + 1, completionToken: token });
  t.is(wrongSize.body.code, 'completion_digest_mismatch');
  const foreign = await complete('svc-hashed-ngrams-512', 'config.json', { sha256: readme.sha256, sizeBytes: readme.sizeBytes, completionToken: token });
  t.is(foreign.status, 403);
  t.is(foreign.body.code, 'completion_token_foreign');
  const unknown = await complete('svc-hashed-ngrams-512', 'README.md', { sha256: readme.sha256, sizeBytes: readme.sizeBytes, completionToken: 'sct_made_up' });
  t.is(unknown.status, 403);
  t.is(unknown.body.code, 'completion_token_invalid');
  const badBody = await complete('svc-hashed-ngrams-512', 'README.md', { sha256: 'xyz', sizeBytes: -1, completionToken: token });
  t.is(badBody.status, 422);
  t.is(await pulls('svc-hashed-ngrams-512'), before, 'refusals recorded nothing');

  // The mismatches above did not spend the token: the right digest still succeeds, once.
  const good = await complete('svc-hashed-ngrams-512', 'README.md', { sha256: readme.sha256, sizeBytes: readme.sizeBytes, completionToken: token });
  t.is(good.body.status, 'client-attested');
  const spent = await complete('svc-hashed-ngrams-512', 'README.md', { sha256: 'b'.repeat(64), sizeBytes: readme.sizeBytes, completionToken: token });
  t.is(spent.status, 409);
  t.is(spent.body.code, 'completion_token_spent');
  t.is(await pulls('svc-hashed-ngrams-512'), before + 1);
});

test('a completion retried with the same token and digest answers the first record and counts nothing new', async (t) => {
  const plan = await svc.client().catalog.downloadPlan({ params: { id: 'support-tickets-sample' } });
  const tickets = plan.files.find((file) => file.path === 'tickets.csv')!;
  const before = await pulls('support-tickets-sample');
  const { token } = await startDownload('support-tickets-sample', 'tickets.csv', { authorization: 'Bearer lost-answer' });
  const attestation = { sha256: tickets.sha256, sizeBytes: tickets.sizeBytes, completionToken: token };
  const first = await complete('support-tickets-sample', 'tickets.csv', attestation);
  t.is(first.status, 200);
  t.is(first.body.status, 'client-attested');
  // The answer was lost on the way: the client posts the same thing again, twice, one of them prefixed.
  const retried = await Promise.all([
    complete('support-tickets-sample', 'tickets.csv', attestation),
    complete('support-tickets-sample', 'tickets.csv', { ...attestation, sha256: `sha256:${tickets.sha256.toUpperCase()}` }),
  ]);
  for (const retry of retried) {
    t.is(retry.status, 200);
    t.is(retry.body.status, 'already-recorded');
    t.is(retry.body.recordedAt, first.body.recordedAt, 'the first record is answered');
    t.is(retry.body.revision, first.body.revision);
    t.is(retry.body.sha256, tickets.sha256);
  }
  t.is(await pulls('support-tickets-sample'), before + 1, 'retries count nothing new');
  const otherSize = await complete('support-tickets-sample', 'tickets.csv', { ...attestation, sizeBytes: tickets.sizeBytes + 1 });
  t.is(otherSize.status, 409);
  t.is(otherSize.body.code, 'completion_token_spent');
});

// Serial: it counts every stored token, so no other test may start a download meanwhile.
test.serial('a HEAD on a download path answers the redirect but issues no completion token', async (t) => {
  const countTokens = async () =>
    Number(((await svc.server.database.sequelize.query('SELECT count(*) AS n FROM catalog_completion_tokens', { plain: true })) as { n: string }).n);
  const before = await countTokens();
  const head = await fetch(`${svc.apiUrl}/api/downloads/tiny-sentiment-lexicon/lexicon.tsv`, {
    method: 'HEAD',
    redirect: 'manual',
    headers: { authorization: 'Bearer head-probe' },
  });
  t.is(head.status, 302);
  t.is(head.headers.get('x-svc-completion-token'), null);
  t.truthy(head.headers.get('location'));
  t.regex(head.headers.get('x-svc-sha256') ?? '', /^[0-9a-f]{64}$/);
  t.is(await countTokens(), before, 'nothing was stored');
  const get = await startDownload('tiny-sentiment-lexicon', 'lexicon.tsv', { authorization: 'Bearer head-probe' });
  t.truthy(get.token, 'a GET still issues one');
  t.is(await countTokens(), before + 1);
});

test('trending moves only on attested pulls: redirects, object fetches and HEAD probes count for nothing', async (t) => {
  const trendingPulls = async () =>
    (await svc.client().catalog.trending({ query: { window: '24h' } })).rows.find((row) => row.artifact.id === 'tiny-sentiment-lexicon')?.pulls ?? 0;
  const before = await trendingPulls();
  for (let index = 0; index < 3; index++) {
    const { location } = await startDownload('tiny-sentiment-lexicon', 'lexicon.tsv', { authorization: `Bearer probe-${index}` });
    await (await fetch(location)).arrayBuffer();
    await fetch(location, { method: 'HEAD' });
    await fetch(`${svc.apiUrl}/api/downloads/tiny-sentiment-lexicon/lexicon.tsv`, { method: 'HEAD', redirect: 'manual' });
  }
  t.is(await trendingPulls(), before);
  const plan = await svc.client().catalog.downloadPlan({ params: { id: 'tiny-sentiment-lexicon' } });
  const lexicon = plan.files.find((file) => file.path === 'lexicon.tsv')!;
  const { token } = await startDownload('tiny-sentiment-lexicon', 'lexicon.tsv', { authorization: 'Bearer trending-attester' });
  await complete('tiny-sentiment-lexicon', 'lexicon.tsv', { sha256: lexicon.sha256, sizeBytes: lexicon.sizeBytes, completionToken: token });
  t.is(await trendingPulls(), before + 1);
  const all = await svc.client().catalog.trending({ query: { window: 'all' } });
  t.true(all.rows.some((row) => row.artifact.id === 'tiny-sentiment-lexicon'));
});
