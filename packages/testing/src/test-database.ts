import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface TestDatabase {
  /** Set when the suite runs against PostgreSQL (`TEST_DATABASE_URL`); absent means embedded PGlite. */
  databaseUrl: string | undefined;
  /** A fresh data directory (embedded database, operator token, local objects). */
  dataDir: string;
  kind: 'embedded' | 'postgres';
  drop(): Promise<void>;
}

/**
 * An isolated database for one test file: a new database on the PostgreSQL named by
 * `TEST_DATABASE_URL`, or a temporary PGlite directory. Either way nothing is shared with
 * another file, so files run in parallel. Benches pass their own admin URL (`BENCH_DATABASE_URL`)
 * and name prefix.
 */
export async function createTestDatabase(options: { adminUrl?: string; prefix?: string } = {}): Promise<TestDatabase> {
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
    await admin.query(`CREATE DATABASE ${name}`);
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
