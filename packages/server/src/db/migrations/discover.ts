import { readdirSync } from 'node:fs';
import type { Migration } from './types.ts';

/**
 * A migration's file name: a timestamp (`20261121T1200`), a dash and words in kebab case. The
 * name without `.ts` is its id in `svc_migrations`, so a file is never renamed once released.
 */
const MIGRATION_FILE = /^\d{8}T\d{4}-[a-z0-9]+(?:-[a-z0-9]+)*\.ts$/;

/** The order migrations run in: by name, which is by timestamp first (as it has always been). */
export const byName = (a: string, b: string) => a.localeCompare(b);

/**
 * The migrations' ids found in `directory`, in the order they run: every file named like a
 * migration, so a feature adds one by adding its file (no list to edit).
 */
export function migrationNames(directory: string): string[] {
  return readdirSync(directory)
    .filter((file) => MIGRATION_FILE.test(file))
    .map((file) => file.slice(0, -'.ts'.length))
    .sort(byName);
}

/**
 * The loaded migrations, checked against their file names: a migration whose `name` is not its
 * file's would be recorded under an id no file has, and run again under the other one.
 */
export function checkedMigrations(names: readonly string[], loaded: readonly Migration[]): Migration[] {
  return loaded.map((migration, index) => {
    if (migration.name !== names[index]) throw new Error(`the migration in ${names[index]}.ts is named ${migration.name}: a migration's name is its file name`);
    return migration;
  });
}
