import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { artifactTypes, licenses, searchSorts, tools, trendingWindows } from '@svc/schemas';
import { ConfigError, loadConfig } from '../src/index.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
});
test.after.always(async () => {
  await svc?.close();
});

const api = async (pathAndQuery: string, init?: RequestInit) => {
  const response = await fetch(`${svc.apiUrl}${pathAndQuery}`, init);
  return { status: response.status, body: (await response.json()) as any, headers: response.headers };
};

test('the demo catalog is loaded: search without q lists every artifact, ordered by downloads then rating', async (t) => {
  const { status, body } = await api('/api/artifacts');
  t.is(status, 200);
  t.true(Array.isArray(body.rows));
  t.deepEqual(body.rows.map((row: any) => row.id).sort(), [
    'all-minilm-l6-v2',
    'prompt-injection-rules',
    'support-tickets-sample',
    'svc-hashed-ngrams-512',
    'tiny-sentiment-lexicon',
  ]);
  t.is(body.sort, 'best');
  t.is(body.nextCursor, null);
});

test('q ranks by PostgreSQL full text, and explain=1 says why', async (t) => {
  const { body } = await api('/api/artifacts?q=sentiment&explain=1');
  t.is(body.rows[0].id, 'tiny-sentiment-lexicon');
  t.true(body.rows[0].score > 0);
  t.is(body.rows[0].explain.method, 'fulltext');
  t.true(body.rows[0].explain.matchedFields.includes('name'));
  t.regex(body.rows[0].explain.reason, /ts_rank_cd/);
  const none = await api('/api/artifacts?q=zebra%20quantum%20violin');
  t.deepEqual(none.body.rows, []);
  // websearch syntax: a quoted phrase and exclusion
  const phrase = await api(`/api/artifacts?q=${encodeURIComponent('"prompt injection" -sentiment')}`);
  t.deepEqual(
    phrase.body.rows.map((row: any) => row.id),
    ['prompt-injection-rules'],
  );
});

test('semantic=1 ranks by stored hashed embeddings; word pieces match (retrieve ~ retrieval)', async (t) => {
  const { body } = await api('/api/artifacts?q=hashed%20ngram%20vectors%20to%20retrieve&semantic=1&explain=1');
  t.true(body.semantic);
  t.is(body.embeddingModel, 'svc-hashed-ngrams-512');
  t.is(body.rows[0].id, 'svc-hashed-ngrams-512');
  const scores = body.rows.map((row: any) => row.score);
  t.deepEqual(
    scores,
    [...scores].sort((a: number, b: number) => b - a),
  );
  t.is(body.rows[0].explain.method, 'semantic');
  t.regex(body.rows[0].explain.reason, /cosine similarity/);
  const bad = await api('/api/artifacts?semantic=1');
  t.is(bad.status, 400);
  t.is(bad.body.code, 'bad_request');
});

test('filters narrow the rows; empty values are omitted; unknown values are 422', async (t) => {
  const datasets = await api('/api/artifacts?type=dataset');
  t.deepEqual(
    datasets.body.rows.map((row: any) => row.id),
    ['support-tickets-sample'],
  );
  const external = await api('/api/artifacts?hosting=external&source=huggingface&worksWith=onnxruntime');
  t.deepEqual(
    external.body.rows.map((row: any) => row.id),
    ['all-minilm-l6-v2'],
  );
  const verified = await api('/api/artifacts?reviewStatus=verified&license=cc-by-4.0');
  t.deepEqual(
    verified.body.rows.map((row: any) => row.id),
    ['prompt-injection-rules'],
  );
  const empty = await api('/api/artifacts?type=&license=&q=&sort=');
  t.is(empty.status, 200);
  t.is(empty.body.rows.length, 5);
  const unknown = await api('/api/artifacts?type=spaceship');
  t.is(unknown.status, 422);
  t.is(unknown.body.code, 'validation_failed');
});

test('summary=1 adds facet counts over every match', async (t) => {
  const { body } = await api('/api/artifacts?summary=1&limit=1');
  t.is(body.rows.length, 1);
  t.is(body.summary.total, 5);
  t.deepEqual(body.summary.type, { embedding: 2, model: 1, tool: 1, dataset: 1 });
  t.is(body.summary.hosting.hosted, 4);
});

test('cursor pages through with limit at its edges (1 and 100 pass, 0 and 101 fail)', async (t) => {
  const seen: string[] = [];
  let cursor: string | null = '0';
  while (cursor !== null) {
    const page = await api(`/api/artifacts?sort=name&limit=2&cursor=${cursor}`);
    seen.push(...page.body.rows.map((row: any) => row.id));
    cursor = page.body.nextCursor;
  }
  t.is(seen.length, 5);
  t.is(new Set(seen).size, 5);
  t.is((await api('/api/artifacts?limit=1')).body.rows.length, 1);
  t.is((await api('/api/artifacts?limit=100')).status, 200);
  t.is((await api('/api/artifacts?limit=0')).status, 422);
  t.is((await api('/api/artifacts?limit=101')).status, 422);
  t.is((await api('/api/artifacts?cursor=abc')).status, 422);
});

test('every sort value answers', async (t) => {
  for (const sort of searchSorts) {
    const { status, body } = await api(`/api/artifacts?sort=${sort}&q=embeddings`);
    t.is(status, 200, sort);
    t.is(body.sort, sort);
  }
  const names = (await api('/api/artifacts?sort=name')).body.rows.map((row: any) => row.name.toLowerCase());
  t.deepEqual(names, [...names].sort());
});

test('artifact, metadata.json, agent-bundle, versions, files and plan', async (t) => {
  const artifact = await api('/api/artifacts/tiny-sentiment-lexicon');
  t.is(artifact.body.latestRevision, 'v2');
  t.is(artifact.body.links.downloadPlan, `${svc.apiUrl}/api/artifacts/tiny-sentiment-lexicon/download-plan`);
  const missing = await api('/api/artifacts/no-such-thing');
  t.is(missing.status, 404);
  t.is(missing.body.code, 'artifact_not_found');
  t.is(typeof missing.body.error, 'string');
  const versions = await api('/api/artifacts/tiny-sentiment-lexicon/versions');
  t.deepEqual(
    versions.body.rows.map((row: any) => [row.revision, row.isLatest]),
    [
      ['v2', true],
      ['v1', false],
    ],
  );
  const files = await api('/api/artifacts/tiny-sentiment-lexicon/files?limit=2');
  t.is(files.body.rows.length, 2);
  t.is(files.body.nextCursor, '2');
  const onnx = await api('/api/artifacts/tiny-sentiment-lexicon/files?tool=onnxruntime');
  t.deepEqual(
    onnx.body.rows.map((row: any) => row.path),
    ['lexicon.tsv', 'model-card.json'],
    'files tied to another tool are left out',
  );
  const plan = await api('/api/artifacts/tiny-sentiment-lexicon/download-plan');
  t.is(plan.body.artifactId, 'tiny-sentiment-lexicon');
  t.is(plan.body.revision, 'v2');
  for (const file of plan.body.files) {
    t.regex(file.sha256, /^[0-9a-f]{64}$/);
    t.true(Number.isInteger(file.sizeBytes));
  }
  t.is(
    plan.body.totalBytes,
    plan.body.files.reduce((sum: number, file: any) => sum + file.sizeBytes, 0),
  );
  const external = await api('/api/artifacts/all-minilm-l6-v2/download-plan');
  t.is(external.status, 409);
  t.is(external.body.code, 'no_hosted_files');
  const metadata = await api('/api/artifacts/tiny-sentiment-lexicon/metadata.json');
  t.is(metadata.body.schema, 'svc.catalog.artifact.v1');
  t.is(metadata.body.files.length, 3);
  const bundle = await api('/api/artifacts/prompt-injection-rules/agent-bundle');
  t.is(bundle.body.plan.files.length, 2);
  t.true(bundle.body.trust.consistent);
  t.regex(bundle.body.cli, /^svc download prompt-injection-rules/);
});

test('trust bundles are checked against the files; reviews and their summary', async (t) => {
  const trust = await api('/api/trust-bundles/svc-hashed-ngrams-512');
  t.is(trust.body.rows.length, 1);
  t.true(trust.body.consistent);
  t.deepEqual(trust.body.mismatches, []);
  const reviews = await api('/api/artifacts/tiny-sentiment-lexicon/reviews?limit=1');
  t.is(reviews.body.rows.length, 1);
  const summary = await api('/api/artifacts/tiny-sentiment-lexicon/review-summary');
  t.deepEqual(summary.body, {
    artifactId: 'tiny-sentiment-lexicon',
    count: 2,
    averageRating: 4,
    distribution: { 1: 0, 2: 0, 3: 1, 4: 0, 5: 1 },
    reviewStatus: 'community-reviewed',
  });
});

test('downloadable-files lists hosted files of latest revisions, by artifact, tool and pack', async (t) => {
  const all = await api('/api/downloadable-files');
  t.true(all.body.rows.every((row: any) => row.artifactId && row.sha256 && Number.isInteger(row.sizeBytes)));
  t.false(all.body.rows.some((row: any) => row.artifactId === 'all-minilm-l6-v2'));
  t.false(all.body.rows.some((row: any) => row.artifactId === 'tiny-sentiment-lexicon' && row.revision === 'v1'));
  const docs = await api('/api/downloadable-files?artifactId=tiny-sentiment-lexicon&pack=docs');
  t.deepEqual(
    docs.body.rows.map((row: any) => row.path),
    ['docs/README.md'],
  );
  t.is((await api('/api/downloadable-files?artifactId=&limit=1')).body.rows.length, 1);
});

test('resolve finds an artifact by upstream repository', async (t) => {
  const found = await api('/api/resolve?repo=sentence-transformers/all-MiniLM-L6-v2&source=huggingface');
  t.is(found.body.id, 'all-minilm-l6-v2');
  const byUrl = await api(`/api/resolve?repo=${encodeURIComponent('https://huggingface.co/sentence-transformers/all-minilm-l6-v2')}`);
  t.is(byUrl.body.id, 'all-minilm-l6-v2');
  const missing = await api('/api/resolve?repo=nobody/nothing');
  t.is(missing.status, 404);
});

test('rankings and trending answer for every slug and window', async (t) => {
  const top = await api('/api/rankings/top-rated');
  t.is(top.body.rows[0].artifact.id, 'tiny-sentiment-lexicon');
  t.is((await api('/api/rankings/datasets')).body.rows[0].artifact.id, 'support-tickets-sample');
  t.is((await api('/api/rankings/unknown')).status, 422);
  for (const window of trendingWindows) t.is((await api(`/api/trending?window=${window}`)).body.window, window);
  t.is((await api('/api/trending')).body.window, '7d');
  t.is((await api('/api/trending?limit=101')).status, 422);
});

test('mirror and source requests are filed once per caller, in the catalog request store', async (t) => {
  const body = JSON.stringify({ useCase: 'offline embeddings', targetTool: 'onnxruntime' });
  const first = await api('/api/artifacts/all-minilm-l6-v2/mirror-request', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  t.is(first.status, 202);
  t.regex(first.body.id, /^brr_[A-Za-z0-9_-]{16,64}$/);
  t.is(first.body.status, 'submitted');
  t.false(first.body.duplicate);
  const again = await api('/api/artifacts/all-minilm-l6-v2/mirror-request', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  t.is(again.body.id, first.body.id);
  t.true(again.body.duplicate);
  const unknownField = await api('/api/artifacts/all-minilm-l6-v2/mirror-request', {
    method: 'POST',
    body: JSON.stringify({ useCase: 'x', targetTool: 'y', extra: 1 }),
    headers: { 'content-type': 'application/json' },
  });
  t.is(unknownField.status, 422);
  const source = await svc
    .client()
    .catalog.sourceRequest({ body: { repo: 'BAAI/bge-small-en-v1.5', source: 'huggingface', useCase: 'retrieval', targetTool: 'sentence-transformers' } });
  t.is(source.kind, 'source');
});

test('agent discovery lists the value sets; /v1/models lists the hashed embedding model; OpenAPI carries the enums', async (t) => {
  const discovery = await api('/api/agent-discovery');
  t.deepEqual(discovery.body.values.type, [...artifactTypes]);
  t.deepEqual(discovery.body.values.tool, [...tools]);
  t.true(discovery.body.downloadProcedure.length > 5);
  const models = await svc.operator.models.list();
  const model = models.data.find((entry) => entry.id === 'svc-hashed-ngrams-512');
  t.is(model?.dimensions, 512);
  t.deepEqual(model?.tasks, ['embeddings']);
  const openapi = (await (await fetch(`${svc.baseUrl}/openapi.json`)).json()) as any;
  t.deepEqual(openapi.components.schemas.License.enum, [...licenses]);
  t.deepEqual(openapi.components.schemas.SearchSort.enum, [...searchSorts]);
  t.truthy(openapi.paths['/api/downloads/{id}/{path}'].get.responses['302']);
});

test('limits at their edges: the limit passes, one past fails', async (t) => {
  const edges: Array<[string, number]> = [
    ['/api/artifacts?limit=', 100],
    ['/api/artifacts/tiny-sentiment-lexicon/files?limit=', 500],
    ['/api/artifacts/tiny-sentiment-lexicon/reviews?limit=', 100],
    ['/api/downloadable-files?limit=', 500],
    ['/api/rankings/newest?limit=', 100],
    ['/api/trending?limit=', 100],
  ];
  for (const [prefix, max] of edges) {
    t.is((await api(`${prefix}${max}`)).status, 200, `${prefix}${max}`);
    t.is((await api(`${prefix}${max + 1}`)).status, 422, `${prefix}${max + 1}`);
    t.is((await api(`${prefix}0`)).status, 422, `${prefix}0`);
  }
  t.is((await api(`/api/artifacts?q=${'a'.repeat(500)}`)).status, 200);
  t.is((await api(`/api/artifacts?q=${'a'.repeat(501)}`)).status, 422);
  const mirror = (useCase: string) =>
    api('/api/artifacts/all-minilm-l6-v2/mirror-request', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer limits' },
      body: JSON.stringify({ useCase, targetTool: 'onnxruntime' }),
    });
  t.is((await mirror('u'.repeat(2000))).status, 202);
  t.is((await mirror('u'.repeat(2001))).status, 422);
  t.is((await mirror('')).status, 422);
});

test('configuration: signed URL lifetime 1..300 and completion token lifetime 60..86400', (t) => {
  for (const ttl of ['1', '300']) t.is(loadConfig({ SVC_STORAGE_URL_TTL_SECONDS: ttl }).storage.urlTtlSeconds, Number(ttl));
  for (const ttl of ['0', '301'])
    t.throws(() => loadConfig({ SVC_STORAGE_URL_TTL_SECONDS: ttl }), { instanceOf: ConfigError, message: /SVC_STORAGE_URL_TTL_SECONDS/ });
  for (const ttl of ['60', '86400']) t.is(loadConfig({ SVC_COMPLETION_TOKEN_TTL_SECONDS: ttl }).catalog.completionTokenTtlSeconds, Number(ttl));
  for (const ttl of ['59', '86401']) t.throws(() => loadConfig({ SVC_COMPLETION_TOKEN_TTL_SECONDS: ttl }), { instanceOf: ConfigError });
  t.throws(() => loadConfig({ SVC_STORAGE_SIGNING_KEY: 'short' }), { message: /SVC_STORAGE_SIGNING_KEY/ });
  t.throws(() => loadConfig({ SVC_STORAGE: 'ftp' }), { message: /SVC_STORAGE/ });
});

const SERVER_BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
function runServerBin(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SERVER_BIN, ...args], { env: { ...process.env, SVC_LOG_LEVEL: 'silent', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('svc-server catalog import: idempotent upsert, hosted content, errors name the line', async (t) => {
  // The import runs against this server's database while it is stopped? No: PostgreSQL allows a
  // second client; the embedded database has one session, so import into a fresh data dir there.
  const { createTestDatabase } = await import('@svc/testing/test-database');
  const database = await createTestDatabase();
  try {
    const file = path.join(database.dataDir, 'catalog.jsonl');
    await writeFile(path.join(database.dataDir, 'weights.bin'), Buffer.alloc(4096, 7));
    const lines = [
      {
        kind: 'artifact',
        id: 'imported-model',
        name: 'Imported model',
        type: 'model',
        license: 'mit',
        hosting: 'hosted',
        source: 'upload',
        summary: 'Imported from JSONL',
        tags: ['import'],
      },
      { kind: 'version', artifactId: 'imported-model', revision: 'r1' },
      { kind: 'file', artifactId: 'imported-model', revision: 'r1', path: 'weights.bin', contentFile: 'weights.bin', packs: ['default', 'weights'] },
      { kind: 'review', id: 'imp-1', artifactId: 'imported-model', author: 'tester', rating: 5 },
    ];
    await writeFile(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    const env: Record<string, string> = {
      SVC_DATA_DIR: database.dataDir,
      SVC_CATALOG_DEMO: 'off',
      ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    };
    const first = await runServerBin(['catalog', 'import', file], env);
    t.is(first.code, 0, first.stderr);
    t.regex(first.stdout, /artifacts\s+1 created, 0 updated, 0 unchanged/);
    t.regex(first.stdout, /hosted bytes\s+4096/);
    const second = await runServerBin(['catalog', 'import', file], env);
    t.is(second.code, 0, second.stderr);
    t.regex(second.stdout, /artifacts\s+0 created, 0 updated, 1 unchanged/);
    t.regex(second.stdout, /files\s+0 created, 0 updated, 1 unchanged/);
    const badText = [
      JSON.stringify(lines[0]),
      '{"kind":"version","artifactId":"imported-model"}',
      'not json',
      JSON.stringify({ ...lines[2], revision: 'r9' }),
      JSON.stringify({ ...lines[3], rating: 6 }),
    ].join('\n');
    await writeFile(file, `${badText}\n`);
    const bad2 = await runServerBin(['catalog', 'import', file], env);
    t.is(bad2.code, 1);
    t.regex(bad2.stderr, /line 2: revision: /);
    t.regex(bad2.stderr, /line 3: not valid JSON/);
    t.regex(bad2.stderr, /line 5: rating: /);
    t.regex(bad2.stderr, /nothing imported/);
  } finally {
    await database.drop();
  }
});
