// `svc-server export`, `backup` and `restore` timed on a filled embedded instance: 100,000 board
// posts and 10,000 ledger entries by default (`--posts`, `--ledger`), the figures docs/backup.md
// quotes. The export goes into a new database on BENCH_DATABASE_URL's server (default the local
// PostgreSQL); the backup is of the embedded database; the restore goes into a new data directory.
// Absolute times on a shared machine mean little: each is printed with the load average and the
// core count, as the other benches do.
//   pnpm bench:backup [-- --posts 100000 --ledger 10000]
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '@svc/server';
import { SERVER_BIN } from '@svc/testing/server-process';
import { openDatabase, runMigrations } from '@svc/testing/server-internals';
import { createTestDatabase } from '@svc/testing/test-database';
import { reportFigures, type Figure } from './report.ts';
import { benchArguments } from './args.ts';

const { values } = parseArgs({
  args: benchArguments(),
  options: { posts: { type: 'string', default: '100000' }, ledger: { type: 'string', default: '10000' } },
});
const posts = Number(values.posts);
const ledger = Number(values.ledger);
const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

/** Each command's time, handed to the runner at the end (no target: the figures are for the docs). */
const timings: Figure[] = [];

/** Runs `svc-server <args>` with only the settings given, timed; its --json answer parsed. */
async function timed(label: string, args: string[], env: Record<string, string>) {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_') && name !== 'DATABASE_URL'));
  const loadBefore = load();
  const started = performance.now();
  const child = spawn(process.execPath, [SERVER_BIN, ...args, '--json'], {
    env: { ...inherited, SVC_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${label} exited ${code}`);
  process.stdout.write(`${label.padEnd(44)} ${seconds.toFixed(1).padStart(6)} s   load before ${loadBefore}, after ${load()}\n`);
  timings.push({ figure: label, svc: Number(seconds.toFixed(1)), unit: 's' });
  return JSON.parse(stdout) as { rows?: number; bytes?: number };
}

const work = await mkdtemp(path.join(tmpdir(), 'svc-bench-backup-'));
const source = path.join(work, 'source');
const target = await createTestDatabase({ adminUrl, prefix: 'svc_bench_backup' });
try {
  process.stdout.write(`backup bench: ${posts} posts, ${ledger} ledger entries; ${cpus().length} cores, load ${load()}\n`);
  // The embedded database, migrated and filled in bulk (through the API this would take an hour).
  const log = createLogger('warn');
  const opened = await openDatabase({ databaseUrl: undefined, dataDir: source, poolMax: 1, log });
  try {
    const { sequelize } = opened;
    await runMigrations(sequelize, log);
    await sequelize.query(
      `INSERT INTO blackboard_items (id, key, text, item, value_bytes, key_id, request_hash, edit_token_hash, created_at, expires_at)
       SELECT 'bb_bench_' || n, 'bench:' || (n % 100), 'post ' || n, jsonb_build_object('text', 'post ' || n), 20, 'bench', md5(n::text), md5('edit' || n),
              now() - n * interval '1 millisecond', now() + interval '30 days'
       FROM generate_series(1, :posts) AS n`,
      { replacements: { posts } },
    );
    await sequelize.query(
      `INSERT INTO billing_ledger (principal_id, kind, spendable_delta, reserved_delta, reference)
       SELECT 'bench-' || (n % 100), 'grant', 10, 0, 'bench-grant-' || n FROM generate_series(1, :ledger) AS n`,
      { replacements: { ledger } },
    );
    await sequelize.query(
      `INSERT INTO billing_accounts (principal_id, spendable, reserved)
       SELECT principal_id, sum(spendable_delta), 0 FROM billing_ledger GROUP BY principal_id
       ON CONFLICT (principal_id) DO UPDATE SET spendable = excluded.spendable`,
    );
  } finally {
    await opened.close();
  }
  process.stdout.write(`filled; load ${load()}\n`);

  const exported = await timed('export, embedded into PostgreSQL', ['export', '--to', target.databaseUrl!], { SVC_DATA_DIR: source });
  const file = path.join(work, 'svc.backup');
  await timed('backup of the embedded database', ['backup', file], { SVC_DATA_DIR: source });
  process.stdout.write(`backup file ${((await stat(file)).size / 1e6).toFixed(1)} MB; ${exported.rows} rows exported\n`);
  await timed('restore into a new embedded data directory', ['restore', file], { SVC_DATA_DIR: path.join(work, 'restored') });
  const note = `${posts} posts, ${ledger} ledger entries`;
  const figures = timings.map((timing) => ({ ...timing, note }));
  reportFigures('backup', figures);
} finally {
  await target.drop();
  await rm(work, { recursive: true, force: true });
}
