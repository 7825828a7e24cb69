/**
 * Makes the PGlite templates that let a new embedded database start fast (run at install time):
 * the plain cluster, then the same with svc's migrations applied (see src/db/pglite-template.ts).
 */
import { migrateNewEmbeddedDatabase } from '../src/db/migrate.ts';
import { migrationsFingerprint } from '../src/db/migrations/fingerprint.ts';
import { migrations } from '../src/db/migrations/index.ts';
import { buildMigratedTemplate, buildTemplate } from '../src/db/pglite-template.ts';
import { createLogger } from '../src/observability/logger.ts';

const say = ({ file, created }: { file: string; created: boolean }, what: string) =>
  process.stdout.write(created ? `svc: ${what} written to ${file}\n` : `svc: ${what} present (${file})\n`);

say(await buildTemplate(), 'embedded database template');
const fingerprint = migrationsFingerprint(migrations);
if (fingerprint) {
  const log = createLogger('silent');
  const migrated = await buildMigratedTemplate(fingerprint, (dataDir) => migrateNewEmbeddedDatabase(dataDir, log));
  say(migrated, 'migrated embedded database template');
} else process.stdout.write('svc: a migration is not plain SQL: new embedded databases run their migrations (no migrated template)\n');
