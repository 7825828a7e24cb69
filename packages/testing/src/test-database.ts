import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { run } from './run.ts';
import { SERVER_BIN } from './server-bin.ts';

export interface TestDatabase {
  /** Set when the suite runs against PostgreSQL (`TEST_DATABASE_URL`); absent means embedded PGlite. */
  databaseUrl: string | undefined;
  /** A fresh data directory (embedded database, operator token, local objects). */
  dataDir: string;
  kind: 'embedded' | 'postgres';
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** The PostgreSQL to make it on; `TEST_DATABASE_URL` unless given (undefined: embedded). */
  adminUrl?: string;
  /** Its name's prefix (benches have their own). */
  prefix?: string;
  /**
   * On PostgreSQL, a copy of a database that svc's migrations were run on (`svc-server migrate`,
   * once per set of migrations), instead of an empty one: a test server's start then finds
   * nothing to migrate, as one on the embedded database does from the migrated template. Making
   * the copy took 0.2-1.1 s against 1.1-1.9 s for running the migrations (load 5). Tests of the
   * migrations themselves leave it off.
   */
  migrated?: boolean;
}

/**
 * An isolated database for one test file: a new database on the PostgreSQL named by
 * `TEST_DATABASE_URL`, or a temporary PGlite directory. Either way nothing is shared with
 * another file, so files run in parallel. Benches pass their own admin URL (`BENCH_DATABASE_URL`)
 * and name prefix.
 */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const prefix = options.prefix ?? 'svc_test';
  const dataDir = await mkdtemp(path.join(tmpdir(), `${prefix.replace(/_/g, '-')}-`));
  const adminUrl = 'adminUrl' in options ? options.adminUrl : process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    return { databaseUrl: undefined, dataDir, kind: 'embedded', drop: () => rm(dataDir, { recursive: true, force: true }) };
  }
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    if (!options.migrated) await admin.query(`CREATE DATABASE ${name}`);
    else
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${await migratedTemplate(adminUrl, prefix)}`);
      } catch (error) {
        // 3D000: the template this process remembered is gone. A checkout with other migrations
        // (the new-feature test's copy, beside this lane) made its own and dropped the others as
        // stale: make ours again, once.
        if ((error as { code?: string }).code !== '3D000') throw error;
        templates.delete(`${adminUrl} ${prefix}`);
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${await migratedTemplate(adminUrl, prefix)}`);
      }
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    databaseUrl: url.toString(),
    dataDir,
    kind: 'postgres',
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A URL of `adminUrl`'s server naming the database `name`. */
function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A digest of the server's migration sources: a template made from other ones is never used. */
async function migrationsDigest(): Promise<string> {
  const directory = fileURLToPath(new URL('./db/migrations/', import.meta.resolve('@svc/server')));
  const hash = createHash('sha256');
  for (const entry of (await readdir(directory, { withFileTypes: true })).filter((file) => file.isFile()).sort((a, b) => a.name.localeCompare(b.name)))
    hash.update(`${entry.name}\0`).update(await readFile(path.join(directory, entry.name)));
  return hash.digest('hex').slice(0, 16);
}

const templates = new Map<string, Promise<string>>();

/** The migrated template's name on `adminUrl`'s server, made by the first test file that asks. */
function migratedTemplate(adminUrl: string, prefix: string): Promise<string> {
  const key = `${adminUrl} ${prefix}`;
  let template = templates.get(key);
  if (!template) {
    template = makeMigratedTemplate(adminUrl, prefix);
    templates.set(key, template);
    // A failure is not kept: the next test database tries again.
    template.catch(() => templates.delete(key));
  }
  return template;
}

async function makeMigratedTemplate(adminUrl: string, prefix: string): Promise<string> {
  const stem = `${prefix}_template_`;
  const name = `${stem}${await migrationsDigest()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // Test files start together: one makes the template while the others wait for it.
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [stem]);
    if ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount) return name;
    // Made under another name and renamed once complete, so a run killed halfway leaves no template.
    const building = `${stem}building`;
    await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${building}`);
    const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-template-'));
    try {
      const migrate = await run(process.execPath, [SERVER_BIN, 'migrate'], {
        cwd: dataDir,
        env: { DATABASE_URL: databaseUrl(adminUrl, building), SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'silent' },
        timeoutMs: 120_000,
      });
      if (migrate.code !== 0) throw new Error(`svc-server migrate on the test template exited with ${migrate.code}:\n${migrate.stderr}`);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
    await renameWhenClosed(admin, building, name);
    // Templates of other migrations are left over; one another checkout is copying stays.
    const stale = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1) AND datname <> $2', [stem, name]);
    for (const { datname } of stale.rows) await admin.query(`DROP DATABASE IF EXISTS ${datname}`).catch(() => {});
    return name;
  } finally {
    await admin.end();
  }
}

/** The migrate process's backend may outlive its exit for a moment, and a database in use cannot be renamed. */
async function renameWhenClosed(admin: pg.Client, from: string, to: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.query(`ALTER DATABASE ${from} RENAME TO ${to}`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '55006' || attempt === 100) throw error;
      await sleep(50);
    }
  }
}
