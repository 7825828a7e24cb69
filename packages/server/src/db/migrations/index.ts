import { fileURLToPath } from 'node:url';
import { checkedMigrations, migrationNames } from './discover.ts';
import type { Migration } from './types.ts';

/**
 * Every migration: each file of this folder named `<timestamp>-<words>.ts` (discover.ts), in name
 * order, which is the order of the ids in `svc_migrations`. A feature adds a migration by adding
 * its file. The builds (the published dist, the start bundle) cannot read a folder at run time,
 * so scripts/migration-list-plugin.ts writes this module for them as the same list of static imports.
 */
const names = migrationNames(fileURLToPath(new URL('.', import.meta.url)));
export const migrations: Migration[] = checkedMigrations(
  names,
  await Promise.all(names.map(async (name) => ((await import(`./${name}.ts`)) as { default: Migration }).default)),
);
