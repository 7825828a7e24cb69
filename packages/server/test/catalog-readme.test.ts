import test from 'ava';
import { MAX_ARTIFACT_README_CHARS } from '@svc/schemas';
import { createObjectStore, importCatalog } from '@svc/testing/server-internals';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * An artifact's README (its model card, issue 45): imported with the artifact, answered as text
 * on the artifact (and its metadata), capped at MAX_ARTIFACT_README_CHARS, and changed by a
 * second import. Hostile Markdown is stored as written: the console's renderer makes it safe.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const importArtifact = async (id: string, readme?: string) =>
  importCatalog({ sequelize: svc.server.deps.database.sequelize, store: await createObjectStore(svc.server.deps) }, [
    {
      line: 1,
      value: {
        kind: 'artifact',
        id,
        name: `Card ${id}`,
        type: 'model',
        license: 'mit',
        hosting: 'external',
        source: 'upload',
        ...(readme === undefined ? {} : { readme }),
      },
    },
  ]);

const HOSTILE = [
  '# A model card',
  '',
  '<script>alert(1)</script>',
  '<img src=x onerror="alert(2)">',
  '[click](javascript:alert(3)) and [docs](https://example.org/docs)',
].join('\n');

test('the README is imported with the artifact and answered as written; an artifact without one answers an empty text', async (t) => {
  await importArtifact('card-hostile', HOSTILE);
  await importArtifact('card-none');
  t.is((await svc.client().catalog.artifact({ params: { id: 'card-hostile' } })).readme, HOSTILE);
  t.is((await svc.client().catalog.metadata({ params: { id: 'card-hostile' } })).artifact.readme, HOSTILE);
  t.is((await svc.client().catalog.artifact({ params: { id: 'card-none' } })).readme, '');
  // Searches and lists do not carry it.
  const rows = (await svc.client().catalog.search({ query: { q: 'card' } })).rows;
  t.true(rows.length > 0);
  t.false(rows.some((row) => 'readme' in row));
  // A second import replaces it.
  const again = await importArtifact('card-hostile', '# Revised card');
  t.is(again.artifacts.updated, 1);
  t.is((await svc.client().catalog.artifact({ params: { id: 'card-hostile' } })).readme, '# Revised card');
});

test(`a README of ${MAX_ARTIFACT_README_CHARS} characters is taken, one more is refused naming the line`, async (t) => {
  const longest = `# Long\n${'x'.repeat(MAX_ARTIFACT_README_CHARS - 7)}`;
  t.is(longest.length, MAX_ARTIFACT_README_CHARS);
  await importArtifact('card-longest', longest);
  t.is((await svc.client().catalog.artifact({ params: { id: 'card-longest' } })).readme.length, MAX_ARTIFACT_README_CHARS);
  const refused = await t.throwsAsync(importArtifact('card-too-long', `${longest}x`));
  t.regex(refused.message, /readme|line 1/i);
});
