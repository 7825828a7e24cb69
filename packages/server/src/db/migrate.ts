import type { Logger } from 'pino';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { UmzugStorage } from 'umzug';
import { openDatabase } from './database.ts';
import { migrations } from './migrations/index.ts';

/** Any fixed number shared by every replica: the advisory lock that serialises migrations. */
const MIGRATION_LOCK_KEY = 0x5f5c_0001;

/** Umzug's record of applied migrations, kept in the run's own transaction. */
function transactionalStorage(sequelize: Sequelize, transaction: Transaction): UmzugStorage {
  return {
    async executed() {
      await sequelize.query('CREATE TABLE IF NOT EXISTS svc_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())', {
        transaction,
      });
      const rows = await sequelize.query<{ name: string }>('SELECT name FROM svc_migrations ORDER BY name', { type: QueryTypes.SELECT, transaction });
      return rows.map((row) => row.name);
    },
    async logMigration({ name }) {
      await sequelize.query('INSERT INTO svc_migrations (name) VALUES (:name)', { replacements: { name }, transaction });
    },
    async unlogMigration({ name }) {
      await sequelize.query('DELETE FROM svc_migrations WHERE name = :name', { replacements: { name }, transaction });
    },
  };
}

/**
 * Applies pending migrations in one transaction under a PostgreSQL advisory lock, so replicas
 * starting together run them once: the first holds the lock, the others wait, then find
 * nothing pending. A failed migration rolls the whole run back.
 */
export async function runMigrations(sequelize: Sequelize, log: Logger): Promise<string[]> {
  return sequelize.transaction(async (transaction) => {
    await sequelize.query('SELECT pg_advisory_xact_lock(:key)', { replacements: { key: MIGRATION_LOCK_KEY }, type: QueryTypes.SELECT, transaction });
    const storage = transactionalStorage(sequelize, transaction);
    // Umzug is loaded only when there is something to apply: with its command-line parser it is
    // 180 modules (about 150 ms of CPU to import), and most starts find nothing pending.
    const executed = new Set(await storage.executed({ context: {} }));
    if (migrations.every((migration) => executed.has(migration.name))) return [];
    const { Umzug } = await import('umzug');
    const umzug = new Umzug({
      migrations: migrations.map((migration) => ({
        name: migration.name,
        up: () => migration.up({ sequelize, transaction }),
        down: () => migration.down({ sequelize, transaction }),
      })),
      context: {},
      storage,
      logger: undefined,
    });
    const applied = await umzug.up();
    for (const migration of applied) log.info({ migration: migration.name }, 'migration applied');
    return applied.map((migration) => migration.name);
  });
}

/**
 * Runs every migration on a new embedded database under `dataDir` and closes it cleanly: how the
 * migrated template is made (scripts/build-pglite-template.ts), from the plain one.
 */
export async function migrateNewEmbeddedDatabase(dataDir: string, log: Logger): Promise<void> {
  const database = await openDatabase({ databaseUrl: undefined, dataDir, poolMax: 1, log });
  try {
    await runMigrations(database.sequelize, log);
  } finally {
    await database.close();
  }
}
