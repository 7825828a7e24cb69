import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { QueryTypes } from 'sequelize';
import { VerifiedDownloadError } from '@svc/client';
import { startLocalS3, type LocalS3 } from '@svc/testing/local-s3';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { createObjectStore, importCatalog } from '../src/features/catalog/index.ts';
import { MULTIPART_PART_BYTES, type S3ObjectStore } from '../src/storage/s3-object-store.ts';

/**
 * SVC_STORAGE=s3 against a local S3 (s3rver behind a SigV4 check, @svc/testing/local-s3) reached
 * through SVC_S3_ENDPOINT with path-style addressing, as MinIO and Ceph are: the demo catalog is
 * stored there at start, and the client's verified download takes it back through presigned URLs.
 */
let s3: LocalS3;
let svc: TestServer;
let scratch: string;
test.before(async () => {
  s3 = await startLocalS3();
  // The SDK's own credential chain, as a deployment sets it.
  process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
  svc = await startTestServer({
    env: { SVC_STORAGE: 's3', SVC_S3_ENDPOINT: s3.endpoint, SVC_S3_FORCE_PATH_STYLE: 'true', SVC_STORAGE_URL_TTL_SECONDS: '120', SVC_CATALOG_DEMO: 'on' },
  });
  scratch = await mkdtemp(path.join(tmpdir(), 'svc-s3-test-'));
});
test.after.always(async () => {
  await svc?.close();
  await s3?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const policy = () => ({ hosts: [s3.host], allowHttpLoopback: true });
const store = async () => (await createObjectStore(svc.server.deps)) as S3ObjectStore;

test.serial('the demo catalog is stored in S3 and every hosted file downloads verified and attested', async (t) => {
  const discovery = await svc.client().catalog.agentDiscovery({});
  t.deepEqual(discovery.storageHosts, [s3.host], 'path-style: the endpoint is the host a client allows');
  const plan = await svc.client().catalog.downloadPlan({ params: { id: 'support-tickets-sample' } });
  const result = await svc
    .client()
    .catalog.downloadArtifact({ artifactId: 'support-tickets-sample', destination: path.join(scratch, 'tickets'), policy: policy() });
  t.true(result.ok, result.failures.map((failure) => failure.error.message).join('; '));
  t.is(result.files.length, plan.files.length);
  for (const file of result.files) {
    const planned = plan.files.find((entry) => entry.path === file.path)!;
    t.is(sha256(await readFile(path.join(scratch, 'tickets', file.path))), planned.sha256);
    t.is(file.completion.status, 'client-attested');
  }
  t.is(s3.refused.length, 0, JSON.stringify(s3.refused));
});

test.serial('the Location is a SigV4 presigned GET that signs the generation (the ETag) and reads ranges', async (t) => {
  const plan = await svc.client().catalog.downloadPlan({ params: { id: 'support-tickets-sample' } });
  const planned = plan.files.find((file) => file.path === 'tickets.csv')!;
  const redirect = await fetch(`${svc.apiUrl}/api/downloads/support-tickets-sample/tickets.csv`, { redirect: 'manual' });
  t.is(redirect.status, 302);
  const location = new URL(redirect.headers.get('location')!);
  t.is(location.host, s3.host);
  t.is(location.pathname.split('/')[1], s3.bucket, 'path-style address');
  t.is(location.searchParams.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
  t.is(location.searchParams.get('X-Amz-Expires'), '120', 'SVC_STORAGE_URL_TTL_SECONDS');
  const whole = await fetch(location);
  t.is(whole.status, 200);
  t.is(whole.headers.get('etag'), `"${location.searchParams.get('generation')}"`, 'the signed generation is the ETag S3 answers');
  t.is(sha256(Buffer.from(await whole.arrayBuffer())), planned.sha256);

  const range = await fetch(location, { headers: { range: 'bytes=4-9' } });
  t.is(range.status, 206);
  t.is(range.headers.get('content-range'), `bytes 4-9/${planned.sizeBytes}`);
  t.is((await range.arrayBuffer()).byteLength, 6);

  // The generation is under the signature: another one is a URL S3 refuses.
  const swapped = new URL(location);
  swapped.searchParams.set('generation', 'another');
  t.is((await fetch(swapped)).status, 403);
  t.is(s3.refused.at(-1)?.reason, 'SignatureDoesNotMatch');
});

test.serial('an object rewritten after the plan is refused by the verified download before anything is recorded', async (t) => {
  const artifactId = 'rewritten-on-s3';
  const lines = (content: string) =>
    [
      { kind: 'artifact', id: artifactId, name: 'Rewritten', type: 'dataset', license: 'mit', hosting: 'hosted', source: 'upload' },
      { kind: 'version', artifactId, revision: 'v1' },
      { kind: 'file', artifactId, revision: 'v1', path: 'data.txt', content },
    ].map((value, index) => ({ line: index + 1, value }));
  const s3Store = await store();
  await importCatalog({ sequelize: svc.server.deps.database.sequelize, store: s3Store }, lines('the planned bytes\n'));
  const plan = await svc.client().catalog.downloadPlan({ params: { id: artifactId } });
  const [file] = plan.files;
  // Someone writes other bytes under the same key behind the catalog's back.
  const [row] = await svc.server.deps.database.sequelize.query<{ object_key: string }>('SELECT object_key FROM catalog_files WHERE artifact_id = :artifactId', {
    replacements: { artifactId },
    type: QueryTypes.SELECT,
  });
  const objectKey = row!.object_key;
  await s3Store.put(objectKey, Buffer.from('the altered bytes\n'));

  const error = await t.throwsAsync(
    svc.client().catalog.verifiedDownload({ artifactId, path: file!.path, destination: path.join(scratch, 'rewritten.txt'), plan, policy: policy() }),
    { instanceOf: VerifiedDownloadError },
  );
  t.is(error?.check, 'fetch-status');
  t.regex(error?.message ?? '', /another generation/);
  t.is((await svc.client().catalog.artifact({ params: { id: artifactId } })).downloads, 0, 'nothing recorded');
});

test.serial('a 64 MiB file goes up as a multipart upload and comes back verified', async (t) => {
  const artifactId = 'large-on-s3';
  const bytes = randomBytes(64 * 1024 * 1024);
  await writeFile(path.join(scratch, 'large.bin'), bytes);
  const before = s3.requests.length;
  const result = await importCatalog({ sequelize: svc.server.deps.database.sequelize, store: await store(), baseDir: scratch }, [
    { line: 1, value: { kind: 'artifact', id: artifactId, name: 'Large', type: 'dataset', license: 'mit', hosting: 'hosted', source: 'upload' } },
    { line: 2, value: { kind: 'version', artifactId, revision: 'v1' } },
    { line: 3, value: { kind: 'file', artifactId, revision: 'v1', path: 'large.bin', contentFile: 'large.bin' } },
  ]);
  t.is(result.hostedBytes, bytes.length);
  const calls = s3.requests.slice(before);
  const parts = calls.filter((call) => call.method === 'PUT' && call.query.includes('partNumber'));
  t.is(calls.filter((call) => call.method === 'POST' && call.query.includes('uploads')).length, 1, 'CreateMultipartUpload');
  t.is(parts.length, bytes.length / MULTIPART_PART_BYTES, 'UploadPart, 8 MiB each');
  t.is(calls.filter((call) => call.method === 'POST' && call.query.includes('uploadId')).length, 1, 'CompleteMultipartUpload');

  const plan = await svc.client().catalog.downloadPlan({ params: { id: artifactId } });
  t.is(plan.files[0]?.sha256, sha256(bytes));
  const destination = path.join(scratch, 'large-download.bin');
  const downloaded = await svc.client().catalog.verifiedDownload({ artifactId, path: 'large.bin', destination, plan, policy: policy() });
  t.is(downloaded.sizeBytes, bytes.length);
  t.is(sha256(await readFile(destination)), sha256(bytes));
  t.is(downloaded.completion.status, 'client-attested');
});

test.serial('multipart starts one byte past a part: 8 MiB is one PutObject, 8 MiB + 1 two parts', async (t) => {
  const s3Store = await store();
  for (const [sizeBytes, parts] of [
    [MULTIPART_PART_BYTES, 0],
    [MULTIPART_PART_BYTES + 1, 2],
  ] as const) {
    const file = path.join(scratch, `edge-${sizeBytes}.bin`);
    const bytes = randomBytes(sizeBytes);
    await writeFile(file, bytes);
    const before = s3.requests.length;
    const put = await s3Store.put(`edge/${sizeBytes}`, { file });
    const calls = s3.requests.slice(before);
    t.is(calls.filter((call) => call.query.includes('partNumber')).length, parts, `${sizeBytes} bytes`);
    t.is(calls.filter((call) => call.method === 'PUT' && !call.query.includes('partNumber')).length, parts ? 0 : 1, `${sizeBytes} bytes: one PutObject`);
    t.like(put, { sizeBytes, sha256: sha256(bytes) });
    t.deepEqual(await s3Store.stat(`edge/${sizeBytes}`), { generation: put.generation, sizeBytes });
  }
});

test.serial('a multipart upload whose part keeps failing is aborted, parts and all, and the put fails', async (t) => {
  const file = path.join(scratch, 'failing.bin');
  await writeFile(file, randomBytes(3 * MULTIPART_PART_BYTES));
  const before = s3.requests.length;
  s3.failWhen = ({ method, query }) => method === 'PUT' && query.get('partNumber') === '2';
  try {
    await t.throwsAsync((await store()).put('failing/object', { file }));
  } finally {
    s3.failWhen = undefined;
  }
  const calls = s3.requests.slice(before);
  t.is(calls.filter((call) => call.method === 'DELETE' && call.query.includes('uploadId')).length, 1, 'AbortMultipartUpload');
  t.is(calls.filter((call) => call.method === 'POST' && call.query.includes('uploadId')).length, 0, 'never completed');
  t.is(await (await store()).stat('failing/object'), null, 'no object under the key');
});
