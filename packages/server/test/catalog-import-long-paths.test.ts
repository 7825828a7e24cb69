import { createHash } from 'node:crypto';
import test from 'ava';
import { createObjectStore, importCatalog } from '@svc/testing/server-internals';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * A hosted file's path may be 512 characters (the contract's FilePath), and one segment of it as
 * long as the rest allows. The object store names its objects independently of that length: a
 * file system refuses a name over 255 bytes (ENAMETOOLONG), and GCS an object name over 1,024.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const ARTIFACT = 'long-paths';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const importFiles = async (files: Array<{ path: string; content: string }>) =>
  importCatalog(
    { sequelize: svc.server.deps.database.sequelize, store: await createObjectStore(svc.server.deps) },
    [
      { kind: 'artifact', id: ARTIFACT, name: 'Long paths', type: 'dataset', license: 'mit', hosting: 'hosted', source: 'upload' },
      { kind: 'version', artifactId: ARTIFACT, revision: 'v1' },
      ...files.map((file) => ({ kind: 'file', artifactId: ARTIFACT, revision: 'v1', ...file })),
    ].map((value, index) => ({ line: index + 1, value })),
  );

/** Downloads a file the way a client does: the download path's signed redirect, then the object. */
async function download(path: string): Promise<string> {
  const redirect = await fetch(`${svc.apiUrl}/api/downloads/${ARTIFACT}/${path}`, { redirect: 'manual' });
  if (redirect.status !== 302) throw new Error(`download of ${path.slice(0, 40)}…: ${redirect.status} ${await redirect.text()}`);
  const object = await fetch(redirect.headers.get('location')!);
  if (object.status !== 200) throw new Error(`object of ${path.slice(0, 40)}…: ${object.status}`);
  return object.text();
}

test.serial('a 400-character segment and a 512-character path are imported, hosted and downloaded', async (t) => {
  const longSegment = `${'a'.repeat(396)}.bin`;
  const longest = `${'b'.repeat(100)}/${'c'.repeat(411)}`;
  t.is(longSegment.length, 400);
  t.is(longest.length, 512);
  const files = [
    { path: longSegment, content: 'the file under a 400-character name\n' },
    { path: longest, content: 'the file at the longest path the contract allows\n' },
  ];
  const result = await importFiles(files);
  t.is(result.files.created, 2);
  for (const file of files) t.is(await download(file.path), file.content);

  // The plan names the same digests, and a second import of the same bytes changes nothing.
  const plan = await svc.client().catalog.downloadPlan({ params: { id: ARTIFACT } });
  for (const file of files) t.is(plan.files.find((planned) => planned.path === file.path)?.sha256, sha256(file.content));
  const again = await importFiles(files);
  t.is(again.files.unchanged, 2);
});

test.serial('one character past the path rule is refused before anything is stored', async (t) => {
  const error = await t.throwsAsync(importFiles([{ path: `${'b'.repeat(100)}/${'d'.repeat(412)}`, content: 'x' }]));
  t.regex(error.message, /line 3/);
});
