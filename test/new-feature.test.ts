import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { namesOf, newFeature } from '../scripts/new-feature.ts';

const run = promisify(execFile);
const repository = fileURLToPath(new URL('..', import.meta.url));
const bin = (name: string) => path.join(repository, 'node_modules', '.bin', name);

/**
 * A copy of what a feature is built from: the root's settings, and the schemas, client, server and
 * testing packages (sources and their node_modules links, which are relative, so @svc/* resolve
 * inside the copy), and the settings test, which must pass unedited. The root's node_modules and the server's assets (the PGlite templates) are
 * links to the checkout's: read, never written.
 */
async function copyOfRepository(): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'svc-new-feature-'));
  for (const file of ['package.json', 'ava.config.js', 'tsconfig.base.json']) await cp(path.join(repository, file), path.join(root, file));
  // The root's packages, but @svc/* the copy's own (a link to the checkout's would test the checkout).
  await mkdir(path.join(root, 'node_modules', '@svc'), { recursive: true });
  for (const entry of await readdir(path.join(repository, 'node_modules')))
    if (entry !== '@svc') await symlink(path.join(repository, 'node_modules', entry), path.join(root, 'node_modules', entry));
  for (const name of ['schemas', 'client', 'server', 'testing'])
    await symlink(path.join(root, 'packages', name), path.join(root, 'node_modules', '@svc', name));
  for (const name of ['schemas', 'client', 'server', 'testing']) {
    const from = path.join(repository, 'packages', name);
    const to = path.join(root, 'packages', name);
    for (const part of ['package.json', 'src', 'node_modules'])
      await cp(path.join(from, part), path.join(to, part), { recursive: true, verbatimSymlinks: true });
  }
  // The copy's own svc-server: on PostgreSQL the test kit migrates a template database with it
  // (`svc-server migrate`), the copy's migrations, the generated feature's among them.
  await cp(path.join(repository, 'packages/server/bin'), path.join(root, 'packages/server/bin'), { recursive: true });
  await symlink(path.join(repository, 'packages/server/assets'), path.join(root, 'packages/server/assets'));
  const settingsTest = 'packages/server/test/config-each-feature.test.ts';
  await cp(path.join(repository, settingsTest), path.join(root, settingsTest));
  return root;
}

test('names: kebab case in, every spelling out; anything else is refused', (t) => {
  t.deepEqual(namesOf('saved-searches'), {
    kebab: 'saved-searches',
    camel: 'savedSearches',
    pascal: 'SavedSearches',
    snake: 'saved_searches',
    env: 'SVC_SAVED_SEARCHES',
  });
  for (const bad of ['Feedback', 'saved_searches', '-x', 'x-', '1x', 'a--b', '']) t.throws(() => namesOf(bad), undefined, bad);
});

test('a generated feature (seven files) typechecks and its generated test passes, registered in the two lists (an import and an entry each), nothing else edited, and the settings test derives its row', async (t) => {
  t.timeout(15 * 60_000, 'a typecheck of the server and a test server run, on a loaded machine');
  const root = await copyOfRepository();
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const lists = ['packages/schemas/src/contract.ts', 'packages/server/src/features/index.ts'];
  const before = await Promise.all(lists.map((file) => readFile(path.join(root, file), 'utf8')));

  const { written, edited } = await newFeature('test-notes', { root, timestamp: '29991231T2359' });
  t.deepEqual(edited, lists);
  t.is(written.length, 7);
  // Each list gains its import and its entry, and nothing else changes.
  for (const [index, file] of lists.entries()) {
    const after = (await readFile(path.join(root, file), 'utf8')).split('\n');
    const added = after.filter((line) => !before[index]!.split('\n').includes(line));
    // contract.ts also re-exports the feature's schemas (for the packages importing @svc/schemas).
    const expected = file === 'packages/schemas/src/contract.ts' ? 3 : 2;
    t.is(added.length, expected, `${file}: ${added.join(' | ')}`);
    t.is(after.length, before[index]!.split('\n').length + expected);
  }
  await t.throwsAsync(newFeature('test-notes', { root }), { message: /is there already/ });

  await writeFile(
    path.join(root, 'tsconfig.json'),
    JSON.stringify({ extends: './tsconfig.base.json', include: written.filter((file) => file.endsWith('.ts')), exclude: ['**/node_modules'] }),
  );
  const env = { ...process.env, SVC_LOG_LEVEL: 'silent' };
  const [typecheck, generatedTest] = await Promise.allSettled([
    run(bin('tsc'), ['-p', 'tsconfig.json', '--noEmit'], { cwd: root, env }),
    // The settings test, unedited: it derives the new setting's row (and fails if it cannot).
    run(bin('ava'), ['packages/server/test/test-notes.test.ts', 'packages/server/test/config-each-feature.test.ts'], { cwd: root, env }),
  ]);
  const output = (result: PromiseSettledResult<{ stdout: string; stderr: string }>) =>
    result.status === 'fulfilled' ? '' : `${(result.reason as { stdout?: string }).stdout ?? ''}${(result.reason as { stderr?: string }).stderr ?? ''}`;
  t.is(generatedTest.status, 'fulfilled', output(generatedTest));
  if (generatedTest.status === 'fulfilled') t.regex(generatedTest.value.stdout + generatedTest.value.stderr, /8 tests passed/);
  t.is(typecheck.status, 'fulfilled', output(typecheck));
});
