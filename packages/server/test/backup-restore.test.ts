import { spawn } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { create, extract } from 'tar';
import { createClient } from '@svc/client';
import { freePort } from '@svc/testing/free-port';
import { SERVER_BIN, killAllServerProcesses, startServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';

/**
 * `svc-server backup` and `restore` as a user runs them. On PostgreSQL the backup is taken while
 * the server serves a stream of writes (one REPEATABLE READ snapshot); the embedded database is
 * held by its server, so there the server is stopped first. The restore goes into a new database
 * and data directory, and a server there reads every write acknowledged before the backup began,
 * and verifies a receipt signed before it (the signing secret came back with the backup).
 */
test.after.always(() => killAllServerProcesses());

function runServerCommand(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_') && name !== 'DATABASE_URL'));
  const child = spawn(process.execPath, [SERVER_BIN, ...args], { env: { ...inherited, SVC_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const settingsOf = (database: TestDatabase) => ({ SVC_DATA_DIR: database.dataDir, ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}) });
// The writer posts as fast as the server takes them for as long as the backup runs (on PostgreSQL
// that is while it is taken): no admission window of the board may refuse it, the principal's
// (240 an hour by default) included, as backup-under-writes.test.ts opens them.
const ENV = {
  SVC_CATALOG_DEMO: 'on',
  ...Object.fromEntries(['IP_PUTS', 'GLOBAL_POSTS', 'PRINCIPAL_POSTS', 'CHANNEL_POSTS'].map((cap) => [`SVC_BLACKBOARD_${cap}_PER_HOUR`, '1000000'])),
  ...Object.fromEntries(['GLOBAL_BYTES', 'PRINCIPAL_BYTES', 'CHANNEL_BYTES'].map((cap) => [`SVC_BLACKBOARD_${cap}_PER_HOUR`, '1000000000'])),
};

test('a backup restores into an empty place: every write acknowledged before it, the objects, and receipts that verify', async (t) => {
  t.timeout(300_000);
  const source = await createTestDatabase();
  const target = await createTestDatabase();
  const work = await mkdtemp(path.join(tmpdir(), 'svc-backup-'));
  const file = path.join(work, 'svc.backup');
  const port = String(await freePort());
  try {
    let server = await startServerProcess(source, { ...ENV, SVC_PORT: port });
    const client = () => createClient({ baseUrl: server.baseUrl, apiUrl: server.baseUrl, retry: 0 });
    const host = new URL(server.baseUrl).host;
    const pulled = await createClient({
      baseUrl: server.baseUrl,
      apiUrl: server.baseUrl,
      token: 'backup-downloader',
      storagePolicy: { hosts: [host], allowHttpLoopback: true },
    }).catalog.verifiedDownload({ artifactId: 'support-tickets-sample', path: 'tickets.csv', destination: path.join(work, 'tickets.csv') });
    const acknowledged: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let n = 0; writing; n++) acknowledged.push((await client().blackboard.put({ body: { key: `backup:w${n}`, value: { text: `write ${n}` } } })).id);
    })();
    while (acknowledged.length < 20) await new Promise((resolve) => setTimeout(resolve, 20));
    if (source.kind === 'embedded') {
      writing = false;
      await writer;
      await server.stop();
    }
    const before = [...acknowledged];
    const backup = await runServerCommand(['backup', file, '--json'], settingsOf(source));
    t.is(backup.code, 0, backup.stderr);
    writing = false;
    await writer;
    if (source.kind === 'postgres') {
      t.true(acknowledged.length > before.length, 'the server kept writing during the backup');
      await server.stop();
    }
    const taken = JSON.parse(backup.stdout) as { objects: number; rows: number };
    t.true(taken.objects > 0, 'the hosted files are in the backup');
    t.is((await readFile(file)).length > 0, true);

    const restored = await runServerCommand(['restore', file, '--json'], settingsOf(target));
    t.is(restored.code, 0, restored.stderr);
    t.like(JSON.parse(restored.stdout), { rows: taken.rows, objects: taken.objects });
    t.deepEqual((JSON.parse(restored.stdout) as { secrets: string[] }).secrets.sort(), ['operator-token', 'signing-secret', 'storage-signing-key']);
    // Only into an empty place.
    const twice = await runServerCommand(['restore', file], settingsOf(target));
    t.is(twice.code, 1);
    t.regex(twice.stderr, /already/);

    server = await startServerProcess(target, { ...ENV, SVC_PORT: port });
    const missing: string[] = [];
    for (const id of before)
      await client()
        .blackboard.show({ params: { id } })
        .catch(() => missing.push(id));
    t.deepEqual(missing, [], 'every write acknowledged before the backup began is restored');
    const verified = await client().receipts.verify(pulled.completion.receipt);
    t.is(verified.claims.record_id, pulled.completion.recordId);
    await server.stop();
  } finally {
    await rm(work, { recursive: true, force: true });
    await source.drop();
    await target.drop();
  }
});

test('a backup whose files do not match its manifest, or that is cut short, is refused before anything is written', async (t) => {
  t.timeout(120_000);
  const source = await createTestDatabase({ adminUrl: undefined });
  const work = await mkdtemp(path.join(tmpdir(), 'svc-backup-'));
  try {
    const migrated = await runServerCommand(['migrate'], settingsOf(source));
    t.is(migrated.code, 0, migrated.stderr);
    const file = path.join(work, 'svc.backup');
    const backup = await runServerCommand(['backup', file], settingsOf(source));
    t.is(backup.code, 0, backup.stderr);
    // One row changed inside, the manifest left as it was.
    const unpacked = path.join(work, 'unpacked');
    await mkdir(unpacked);
    await extract({ file, cwd: unpacked });
    const settings = path.join(unpacked, 'tables', 'blackboard_settings.jsonl');
    const original = await readFile(settings, 'utf8');
    const changed = original.replace('posting_enabled\\":true', 'posting_enabled\\":false');
    t.not(changed, original);
    await writeFile(settings, changed);
    const tampered = path.join(work, 'tampered.backup');
    await create({ gzip: true, file: tampered, cwd: unpacked }, ['.']);
    const empty = path.join(work, 'empty-data-dir');
    const refused = await runServerCommand(['restore', tampered], { SVC_DATA_DIR: empty });
    t.is(refused.code, 1);
    t.regex(refused.stderr, /blackboard_settings\.jsonl does not match its manifest/);
    const cut = path.join(work, 'cut.backup');
    await writeFile(cut, (await readFile(file)).subarray(0, 200));
    const short = await runServerCommand(['restore', cut], { SVC_DATA_DIR: empty });
    t.is(short.code, 1);
    t.regex(short.stderr, /not a readable backup/);
    t.false(
      await access(path.join(empty, 'pgdata')).then(
        () => true,
        () => false,
      ),
      'no database was made',
    );
  } finally {
    await rm(work, { recursive: true, force: true });
    await source.drop();
  }
});
