import { Command, CommanderError } from 'commander';
import { consoleUrl, SVC_VERSION } from '@svc/schemas';
import { ConfigError, serverConfigOf, type Config } from './server-config.ts';
import { startEmbeddedDatabase } from './db/embedded.ts';
import { createLogger } from './observability/logger.ts';
import type { SvcServer } from './server.ts';

/** The whole configuration. `config.ts` is imported here, not above: it loads every feature's module (their settings parsers are on the feature list). */
async function configOrExit(): Promise<Config> {
  try {
    const { loadConfig } = await import('./config.ts');
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`svc-server: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function start(): Promise<void> {
  // The embedded database's process starts from the server-wide part, now, while the server's and
  // the features' modules load (a third of a second or more that it would otherwise wait for
  // them: bench/cold-start). A wrong server-wide part starts nothing: configOrExit says why.
  const early = serverConfigOf(process.env);
  const log = createLogger(early?.logLevel ?? 'info');
  const embeddedDatabase = early && !early.databaseUrl ? startEmbeddedDatabase(early.dataDir, log) : undefined;
  // Awaited by createServer; until then a failure must not count as unhandled.
  embeddedDatabase?.catch(() => {});
  // Its process ends by itself if this one exits on a wrong setting (it exits when its channel closes).
  const config = await configOrExit();
  let server: SvcServer | undefined;
  let stopping = false;
  const shutDown = (running: SvcServer) =>
    running.close().then(
      () => {
        log.info('stopped cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  const stop = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting without draining');
      process.exit(1);
    }
    stopping = true;
    // During start-up the server is finished first (migrations are not cut in half), then closed.
    if (!server) {
      log.info({ signal }, 'signal during start-up: stopping as soon as start-up is done');
      return;
    }
    // /readyz fails and open streams end at once; in-flight requests finish.
    log.info({ signal }, 'draining in-flight requests');
    void shutDown(server);
  };
  // Listening before start-up, so a SIGTERM while migrations run stops cleanly too.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  log.info({ database: config.databaseUrl ? 'postgres' : 'embedded' }, 'svc starting: migrations, then listening');
  const { createServer } = await import('./server.ts');
  server = await createServer(config, { logger: log, ...(embeddedDatabase ? { embeddedDatabase } : {}) });
  if (stopping) return void shutDown(server);
  const urls = await server.listen();
  // The console's address is the one a person opens: printed with the others, not left to be guessed.
  const consoleAddress = config.console.enabled ? { console: consoleUrl(urls.baseUrl) } : {};
  log.info({ baseUrl: urls.baseUrl, apiUrl: urls.apiUrl, ...consoleAddress, database: server.database.kind, dataDir: config.dataDir }, 'svc listening');
  if (server.operatorTokenFile)
    log.info({ operatorTokenFile: server.operatorTokenFile }, 'operator token kept in this file (mode 0600), generated on first start; read it from there');
  if (server.database.kind === 'embedded')
    log.info('embedded database (PGlite) in use: fine for trying and small single-node use; set DATABASE_URL for production');
  if (stopping) void shutDown(server);
}

async function migrate(): Promise<void> {
  const config = await configOrExit();
  const log = createLogger(config.logLevel);
  const [{ openDatabase }, { runMigrations }] = await Promise.all([import('./db/database.ts'), import('./db/migrate.ts')]);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 1, log });
  try {
    const applied = await runMigrations(database.sequelize, log);
    process.stdout.write(
      applied.length
        ? `Applied ${applied.length} migration(s):\n${applied.map((name) => `  ${name}`).join('\n')}\n`
        : 'Nothing to migrate: the database is up to date.\n',
    );
  } finally {
    await database.close();
  }
}

async function transfer(direction: 'export' | 'import', other: string, options: { replace?: boolean; json?: boolean }): Promise<void> {
  const config = await configOrExit();
  const [{ parseEndpoint }, { TransferError }, { describeTransfer, runTransfer }] = await Promise.all([
    import('./db/transfer/endpoint.ts'),
    import('./db/transfer/database-image.ts'),
    import('./db/transfer/transfer-command.ts'),
  ]);
  const configured = config.databaseUrl ? { kind: 'url' as const, url: config.databaseUrl } : { kind: 'dir' as const, dataDir: config.dataDir };
  const given = parseEndpoint(other);
  const [from, to] = direction === 'export' ? [configured, given] : [given, configured];
  try {
    const result = await runTransfer({
      from,
      to,
      fromDataDir: direction === 'export' ? config.dataDir : given.kind === 'dir' ? given.dataDir : undefined,
      toDataDir: direction === 'import' ? config.dataDir : given.kind === 'dir' ? given.dataDir : undefined,
      replace: Boolean(options.replace),
      progress: options.json ? () => {} : (line) => process.stderr.write(`${line}\n`),
      log: createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel),
    });
    process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${describeTransfer(result)}\n`);
  } catch (error) {
    if (error instanceof TransferError) {
      process.stderr.write(`svc-server: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function backupOrRestore(command: 'backup' | 'restore', file: string, options: { json?: boolean }): Promise<void> {
  const config = await configOrExit();
  const { TransferError } = await import('./db/transfer/database-image.ts');
  const configured = config.databaseUrl ? { kind: 'url' as const, url: config.databaseUrl } : { kind: 'dir' as const, dataDir: config.dataDir };
  const progress = options.json ? () => {} : (line: string) => process.stderr.write(`${line}\n`);
  try {
    const result =
      command === 'backup'
        ? await (await import('./backup/backup-command.ts')).runBackup({ from: configured, dataDir: config.dataDir, file, progress })
        : await (await import('./backup/restore-command.ts')).runRestore({
            file,
            to: configured,
            dataDir: config.dataDir,
            progress,
            log: createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel),
          });
    process.stdout.write(
      options.json
        ? `${JSON.stringify(result)}\n`
        : `${command === 'backup' ? 'Backed up' : 'Restored'} ${result.rows} row(s) in ${result.tables} tables and ${result.objects} object(s) in ${result.seconds} s.\n`,
    );
  } catch (error) {
    if (error instanceof TransferError) {
      process.stderr.write(`svc-server: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

export function buildProgram(): Command {
  const program = new Command('svc-server')
    .description('The svc server: a self-hostable platform for AI agents.\nConfiguration comes from the environment; see the README for every variable.')
    .version(SVC_VERSION, '-v, --version')
    .exitOverride()
    .showHelpAfterError();
  program.command('start', { isDefault: true }).description('Run migrations and serve both surfaces (default)').action(start);
  program.command('migrate').description('Apply pending database migrations and exit').action(migrate);
  const catalog = program.command('catalog').description('Catalog administration');
  catalog
    .command('import <file>')
    .description(
      'Upsert artifacts, versions, files, trust bundles and reviews from a JSONL file (idempotent; errors name the line; nothing is imported when any line is bad)',
    )
    .action(async (file: string) => {
      const config = await configOrExit();
      const [{ CatalogImportError }, { describeImport, runCatalogImport }] = await Promise.all([
        import('./features/catalog/import-catalog.ts'),
        import('./features/catalog/import-command.ts'),
      ]);
      try {
        const result = await runCatalogImport(config, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel), file);
        process.stdout.write(`${describeImport(result)}\n`);
      } catch (error) {
        if (error instanceof CatalogImportError) {
          process.stderr.write(`svc-server: ${error.message}\n`);
          process.exit(1);
        }
        throw error;
      }
    });
  program
    .command('export')
    .description(
      "Copy this server's whole database (DATABASE_URL, or else the embedded one in SVC_DATA_DIR) into another, verified table by table; stop the server first (docs/backup.md)",
    )
    .requiredOption('--to <target>', 'a postgres:// URL, or a data directory for an embedded database')
    .option('--replace', 'overwrite a target that already holds an svc database')
    .option('--json', 'print the result as JSON, and no progress')
    .action((options: { to: string; replace?: boolean; json?: boolean }) => transfer('export', options.to, options));
  program
    .command('import')
    .description("Copy a whole svc database (a postgres:// URL or a data directory) into this server's database, verified table by table (docs/backup.md)")
    .requiredOption('--from <source>', 'a postgres:// URL, or the data directory of an embedded database')
    .option('--replace', "overwrite this server's database when it already holds svc data")
    .option('--json', 'print the result as JSON, and no progress')
    .action((options: { from: string; replace?: boolean; json?: boolean }) => transfer('import', options.from, options));
  program
    .command('backup <file>')
    .description(
      "Write one file (gzip'd tar) holding the database, the data directory's secrets and local objects, with a manifest of sizes and SHA-256s; consistent while a server runs on PostgreSQL (docs/backup.md)",
    )
    .option('--json', 'print the result as JSON, and no progress')
    .action((file: string, options: { json?: boolean }) => backupOrRestore('backup', file, options));
  program
    .command('restore <file>')
    .description('Bring a backup back into an empty data directory or database (DATABASE_URL), checking every file against its manifest (docs/backup.md)')
    .option('--json', 'print the result as JSON, and no progress')
    .action((file: string, options: { json?: boolean }) => backupOrRestore('restore', file, options));
  return program;
}

try {
  await buildProgram().parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  process.stderr.write(`svc-server: ${(error as Error).message}\n`);
  process.exit(1);
}
