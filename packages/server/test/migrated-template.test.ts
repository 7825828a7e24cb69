/**
 * The migrated template (src/db/pglite-template.ts): made from the migrations' SQL, used only for
 * the very migrations it was made with, and a database started from it is the database the
 * migrations make.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { QueryTypes, Sequelize } from 'sequelize';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { migrateNewEmbeddedDatabase, runMigrations } from '../src/db/migrate.ts';
import { migrationsFingerprint } from '../src/db/migrations/fingerprint.ts';
import { migrations } from '../src/db/migrations/index.ts';
import { sqlMigration, type Migration } from '../src/db/migrations/types.ts';
import { buildMigratedTemplate } from '../src/db/pglite-template.ts';
import { createLogger } from '../src/index.ts';

const log = createLogger('silent');

test('the fingerprint names the migrations and their SQL, and there is none for a migration that is not SQL', (t) => {
  const one = sqlMigration('20990101T0000-one', ['CREATE TABLE one (id int)'], ['DROP TABLE one']);
  const fingerprint = migrationsFingerprint([one]);
  t.regex(fingerprint ?? '', /^[0-9a-f]{16}$/);
  t.is(migrationsFingerprint([sqlMigration('20990101T0000-one', ['CREATE TABLE one (id int)'], ['DROP TABLE one'])]), fingerprint, 'the same migrations');
  t.not(migrationsFingerprint([sqlMigration('20990101T0000-one', ['CREATE TABLE one (id bigint)'], ['DROP TABLE one'])]), fingerprint, 'an edited statement');
  t.not(migrationsFingerprint([sqlMigration('20990101T0000-uno', ['CREATE TABLE one (id int)'], ['DROP TABLE one'])]), fingerprint, 'a renamed migration');
  t.not(migrationsFingerprint([one, sqlMigration('20990101T0001-two', ['SELECT 1'], [])]), fingerprint, 'one more migration');
  const byHand: Migration = { name: '20990101T0002-by-hand', up: async () => {}, down: async () => {} };
  t.is(migrationsFingerprint([one, byHand]), undefined);
});

/** Tables, columns, indexes and constraints of the public schema, and the migrations recorded. */
async function schemaOf(url: string) {
  const sequelize = new Sequelize(url, { dialect: 'postgres', logging: false, pool: { max: 1 } });
  try {
    const select = (sql: string) => sequelize.query(sql, { type: QueryTypes.SELECT });
    return {
      columns: await select(
        `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, column_name`,
      ),
      indexes: await select(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname`),
      constraints: await select(
        `SELECT conrelid::regclass::text AS relation, conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2`,
      ),
      functions: await select(`SELECT proname, pg_get_functiondef(oid) AS definition FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY 1`),
      migrations: (await select('SELECT name FROM svc_migrations ORDER BY name')).map((row) => (row as { name: string }).name),
    };
  } finally {
    await sequelize.close();
  }
}

test('a new database from the migrated template is the one the migrations make, and runs none of them again', async (t) => {
  const fingerprint = migrationsFingerprint(migrations);
  if (!fingerprint) return t.fail('every migration of svc is SQL, so there is a fingerprint');
  // What `pnpm install` makes; already there when the install was run with these migrations.
  await buildMigratedTemplate(fingerprint, (dataDir) => migrateNewEmbeddedDatabase(dataDir, log));

  const root = mkdtempSync(path.join(tmpdir(), 'svc-migrated-template-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const fromTemplate = await startEmbeddedPostgres(path.join(root, 'template'), undefined, { migratedTemplate: true });
  const migrated = await startEmbeddedPostgres(path.join(root, 'migrated'));
  try {
    const sequelize = new Sequelize(migrated.url, { dialect: 'postgres', logging: false, pool: { max: 1 } });
    t.deepEqual((await runMigrations(sequelize, log)).length, migrations.length, 'the plain template runs every migration');
    await sequelize.close();
    const reopened = new Sequelize(fromTemplate.url, { dialect: 'postgres', logging: false, pool: { max: 1 } });
    t.deepEqual(await runMigrations(reopened, log), [], 'the migrated template has them all');
    await reopened.close();

    const [expected, actual] = [await schemaOf(migrated.url), await schemaOf(fromTemplate.url)];
    t.deepEqual(
      actual.migrations,
      migrations.map((migration) => migration.name),
    );
    t.true(expected.columns.length > 50, `${expected.columns.length} columns`);
    t.deepEqual(actual, expected);
  } finally {
    await fromTemplate.close();
    await migrated.close();
  }
});
