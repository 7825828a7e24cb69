import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { type HostedStorage, startHostedStorage } from '@svc/testing/hosted-storage';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The client's helpers resume, skip and check as the CLI does (issue 44), against the real
 * server's built-in store: a partial file is completed with a Range request, an up-to-date file
 * is not fetched when asked to compare first, and checkArtifact reads local files only.
 * verified-download-resume-s3.test.ts runs this file again against a local S3 (ranges, If-Range and
 * ETags as S3 answers them).
 */
const ARTIFACT = 'support-tickets-sample';
const FILE = 'tickets.csv';

let storage: HostedStorage;
let svc: TestServer;
test.before(async () => {
  storage = await startHostedStorage();
  svc = await startTestServer({ env: { ...storage.env, SVC_CATALOG_DEMO: 'on' } });
});
test.after.always(async () => {
  await svc?.close();
  await storage?.close();
});

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const client = () => svc.client({ storagePolicy: { hosts: [storage.host ?? new URL(svc.apiUrl).host], allowHttpLoopback: true } });

async function planned() {
  const plan = await svc.client().catalog.downloadPlan({ params: { id: ARTIFACT } });
  return plan.files.find((file) => file.path === FILE)!;
}

/** The object's bytes and its current generation, read the way a client would. */
async function objectNow() {
  const redirect = await fetch(`${svc.apiUrl}/api/downloads/${ARTIFACT}/${FILE}`, { method: 'HEAD', redirect: 'manual' });
  const location = redirect.headers.get('location')!;
  const object = await fetch(location);
  return { bytes: Buffer.from(await object.arrayBuffer()), generation: new URL(location).searchParams.get('generation')!, etag: object.headers.get('etag') };
}

test('verifiedDownload resumes a partial file of the same generation and fetches only the rest', async (t) => {
  const { bytes, generation, etag } = await objectNow();
  const entry = await planned();
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-client-resume-'));
  const held = Math.floor(bytes.length / 2);
  await writeFile(path.join(directory, `.${FILE}.svc-partial`), bytes.subarray(0, held));
  await writeFile(
    path.join(directory, `.${FILE}.svc-partial.json`),
    JSON.stringify({ artifactId: ARTIFACT, path: FILE, sha256: entry.sha256, sizeBytes: entry.sizeBytes, generation, etag }),
  );
  const progress: number[] = [];
  const file = await client().catalog.verifiedDownload({
    artifactId: ARTIFACT,
    path: FILE,
    destination: path.join(directory, FILE),
    onProgress: ({ receivedBytes }) => progress.push(receivedBytes),
  });
  t.is(file.outcome, 'resumed');
  t.is(file.transferredBytes, bytes.length - held);
  // Attested (the same caller pulling the same bytes in another test of this file is the same record).
  t.regex(file.completion.status, /^(client-attested|already-recorded)$/);
  t.is(file.sha256, sha256(bytes));
  t.true(
    progress.every((received) => received > held),
    'progress counts from the bytes held',
  );
  t.deepEqual(await readdir(directory), [FILE]);
});

test('skipUpToDate answers an UpToDateFile without a fetch or a completion; without it the file is fetched and attested', async (t) => {
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-client-skip-'));
  const destination = path.join(directory, FILE);
  const first = await client().catalog.verifiedDownload({ artifactId: ARTIFACT, path: FILE, destination, skipUpToDate: true });
  t.is(first.outcome, 'fetched');
  const states: string[] = [];
  const skipped = await client().catalog.verifiedDownload({
    artifactId: ARTIFACT,
    path: FILE,
    destination,
    skipUpToDate: true,
    onLocalFile: (local) => states.push(local.state),
  });
  t.like(skipped, { outcome: 'up-to-date', transferredBytes: 0, completion: null, sha256: first.sha256 });
  t.deepEqual(states, ['up-to-date']);
  const again = await client().catalog.verifiedDownload({ artifactId: ARTIFACT, path: FILE, destination });
  t.is(again.outcome, 'fetched');
  t.is(again.completion.status, 'already-recorded');
});

test('checkArtifact reports up-to-date, differs and missing files and fetches nothing', async (t) => {
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-client-check-'));
  const result = await client().catalog.downloadArtifact({ artifactId: ARTIFACT, destination: directory });
  t.true(result.ok);
  const [first, second] = result.files;
  await writeFile(first!.destination, `${(await readFile(first!.destination, 'utf8')).slice(0, -1)}!`);
  const check = await client().catalog.checkArtifact({ artifactId: ARTIFACT, destination: directory, paths: [first!.path, second!.path, 'nope.txt'] });
  t.false(check.ok);
  t.deepEqual(
    check.files.map((file) => file.state),
    ['differs', 'up-to-date', 'not-in-plan'],
  );
  const rerun = await client().catalog.downloadArtifact({ artifactId: ARTIFACT, destination: directory });
  t.deepEqual(
    rerun.upToDate.map((file) => file.path),
    result.files.slice(1).map((file) => file.path),
  );
  t.deepEqual(
    rerun.files.map((file) => file.path),
    [first!.path],
  );
});

test('a whole partial file is attested without a fetch; a partial recorded for another planned digest is started over', async (t) => {
  const { bytes, generation, etag } = await objectNow();
  const entry = await planned();
  const record = { artifactId: ARTIFACT, path: FILE, sha256: entry.sha256, sizeBytes: entry.sizeBytes, generation, etag };
  // Verified bytes a run kept when its completion was refused: nothing left to fetch.
  const whole = await mkdtemp(path.join(tmpdir(), 'svc-client-whole-'));
  await writeFile(path.join(whole, `.${FILE}.svc-partial`), bytes);
  await writeFile(path.join(whole, `.${FILE}.svc-partial.json`), JSON.stringify(record));
  const attested = await client().catalog.verifiedDownload({ artifactId: ARTIFACT, path: FILE, destination: path.join(whole, FILE) });
  t.like(attested, { outcome: 'resumed', transferredBytes: 0, sha256: sha256(bytes) });
  t.deepEqual(await readdir(whole), [FILE]);
  // A partial of the file as another revision planned it: its bytes are not resumed.
  const other = await mkdtemp(path.join(tmpdir(), 'svc-client-other-'));
  await writeFile(path.join(other, `.${FILE}.svc-partial`), Buffer.alloc(10, 0x78));
  await writeFile(path.join(other, `.${FILE}.svc-partial.json`), JSON.stringify({ ...record, sha256: '0'.repeat(64) }));
  const fresh = await client().catalog.verifiedDownload({ artifactId: ARTIFACT, path: FILE, destination: path.join(other, FILE) });
  t.like(fresh, { outcome: 'fetched', transferredBytes: bytes.length, sha256: sha256(bytes) });
  t.deepEqual(await readdir(other), [FILE]);
});
