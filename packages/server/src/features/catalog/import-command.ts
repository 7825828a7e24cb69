import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../server-config.ts';
import { openDatabase } from '../../db/database.ts';
import { runMigrations } from '../../db/migrate.ts';
import type { Logger } from 'pino';
import { publicUrls } from '../../server-config.ts';
import { createObjectStore } from './index.ts';
import { importCatalog, parseJsonLines, type ImportResult } from './import-catalog.ts';

/** `svc-server catalog import <file.jsonl>`: migrate, then upsert the file's records. */
export async function runCatalogImport(config: Config, log: Logger, file: string): Promise<ImportResult> {
  const text = await readFile(file, 'utf8');
  const lines = parseJsonLines(text);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 1, log });
  try {
    await runMigrations(database.sequelize, log);
    const store = await createObjectStore({ config, publicUrls: () => publicUrls(config) });
    return await importCatalog({ sequelize: database.sequelize, store, baseDir: path.dirname(path.resolve(file)) }, lines);
  } finally {
    await database.close();
  }
}

export function describeImport(result: ImportResult): string {
  const line = (name: string, counts: ImportResult['artifacts']) =>
    `  ${name.padEnd(14)} ${counts.created} created, ${counts.updated} updated, ${counts.unchanged} unchanged`;
  return [
    'Catalog import done:',
    line('artifacts', result.artifacts),
    line('versions', result.versions),
    line('files', result.files),
    line('trust bundles', result.trustBundles),
    line('reviews', result.reviews),
    `  hosted bytes   ${result.hostedBytes}`,
  ].join('\n');
}
