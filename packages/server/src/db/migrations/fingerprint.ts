import { createHash } from 'node:crypto';
import type { Migration } from './types.ts';

/**
 * What the migrated template (pglite-template.ts) must have been made from: a hash of every
 * migration's name and SQL, so that a template made before a migration was added or edited is
 * never used for a new database. Undefined when a migration is not plain SQL (its effect cannot
 * be named by its text): then every new database runs its migrations.
 */
export function migrationsFingerprint(migrations: readonly Migration[]): string | undefined {
  if (migrations.some((migration) => !migration.sql)) return undefined;
  const hash = createHash('sha256');
  for (const migration of migrations) hash.update(JSON.stringify([migration.name, migration.sql!.up]));
  return hash.digest('hex').slice(0, 16);
}
