import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'ava';
import { build } from 'tsup';
import { migrationListPlugin } from '../scripts/migration-list-plugin.ts';
import { checkedMigrations, migrationNames } from '../src/db/migrations/discover.ts';
import { migrations } from '../src/db/migrations/index.ts';
import { sqlMigration } from '../src/db/migrations/types.ts';

/** The ids in `svc_migrations` of every database made before migrations were found by name, in their order. */
const historicalIds = [
  '20261121T1200-foundation',
  '20261121T1300-blackboard',
  '20261121T1300-catalog',
  '20261121T1300-identity',
  '20261121T1400-wal-flush',
  '20261121T1401-blackboard-refuse',
  '20261121T1500-blackboard-put-batch',
  '20261122T1000-billing',
  '20261122T1600-catalog-requests',
  '20261122T1800-receipts',
  '20261122T1900-completion-retry',
  '20261122T1900-jobs',
  '20261122T1900-x402',
  '20261126T2300-responses',
  '20261127T0300-key-limits',
  '20261127T0310-a2a-tasks',
  '20261127T0320-response-cache',
  '20261127T0400-mcp-cancelled-calls',
];

test('the migrations found in their folder are the historical ids in their order, and a later one sorts after them', (t) => {
  const ids = migrations.map((migration) => migration.name);
  t.deepEqual(ids.slice(0, historicalIds.length), historicalIds);
  for (const later of ids.slice(historicalIds.length)) t.true(later > historicalIds.at(-1)!, `${later} runs after every migration already applied somewhere`);
});

test('only files named <timestamp>-<words>.ts are migrations, sorted by name', async (t) => {
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-migrations-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  for (const file of [
    '20261201T0900-b.ts',
    'index.ts',
    'types.ts',
    '20261201T0800-a-b.ts',
    '20261201T0800-a.ts',
    'notes.md',
    '20261201T0900-B.ts',
    '2026120T0900-c.ts',
  ])
    await writeFile(path.join(directory, file), '');
  t.deepEqual(migrationNames(directory), ['20261201T0800-a', '20261201T0800-a-b', '20261201T0900-b']);
});

test("a migration whose name is not its file's stops the load", (t) => {
  const migration = sqlMigration('20261201T0800-a', [], []);
  t.deepEqual(checkedMigrations(['20261201T0800-a'], [migration]), [migration]);
  const error = t.throws(() => checkedMigrations(['20261201T0800-renamed'], [migration]));
  t.is(error?.message, "the migration in 20261201T0800-renamed.ts is named 20261201T0800-a: a migration's name is its file name");
});

test('a build (dist, the start bundle) carries the same migrations as static imports, not a folder read', async (t) => {
  const outDir = await mkdtemp(path.join(tmpdir(), 'svc-migrations-build-'));
  t.teardown(() => rm(outDir, { recursive: true, force: true }));
  const entry = path.join(import.meta.dirname, '../src/db/migrations/index.ts');
  await build({
    config: false,
    silent: true,
    entry: { list: entry },
    outDir,
    format: ['esm'],
    platform: 'node',
    target: 'node24',
    noExternal: [/./],
    esbuildPlugins: [migrationListPlugin],
  });
  const built = (await import(pathToFileURL(path.join(outDir, 'list.js')).href)) as { migrations: typeof migrations };
  t.deepEqual(
    built.migrations.map((migration) => migration.name),
    migrations.map((migration) => migration.name),
  );
  t.deepEqual(
    built.migrations.map((migration) => migration.sql),
    migrations.map((migration) => migration.sql),
  );
});
