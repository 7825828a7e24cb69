import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { lockDataDirectory } from '../src/db/data-dir-lock.ts';
import { createTestDatabase } from '@svc/testing/test-database';
import { killAllServerProcesses, startServerProcess } from '@svc/testing/server-process';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * The embedded database lives in a process of its own (db/embedded-process.ts). With
 * DATABASE_URL there is no such process, so these use an embedded database whichever database
 * the suite runs on.
 */
test.after.always(() => killAllServerProcesses());

const childrenOf = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number));
const alive = (pid: number) => existsSync(`/proc/${pid}`) && !/State:\s+Z/.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

test('a killed server takes its database process with it, and the next server opens the data at once', async (t) => {
  const database = await createTestDatabase({ adminUrl: undefined });
  try {
    const first = await startServerProcess(database);
    const [databaseProcess] = childrenOf(first.child.pid!);
    t.truthy(databaseProcess, 'the server has a database process');
    t.regex(readFileSync(`/proc/${databaseProcess}/cmdline`, 'utf8'), /--liftoff-only/);
    await first.kill();
    await waitUntil('the database process to end with its server', () => !alive(databaseProcess!), { timeoutMs: 10_000, intervalMs: 50 });
    const second = await startServerProcess(database);
    t.is((await fetch(`${second.baseUrl}/readyz`)).status, 200);
    await second.stop();
    t.false(existsSync(path.join(database.dataDir, 'pgdata.pid')), 'a clean stop gives the data directory up');
  } finally {
    await database.drop();
  }
});

test('the data directory lock: taken by one live process at a time, waited for, and taken over from a dead one', async (t) => {
  const directory = mkdtempSync(path.join(tmpdir(), 'svc-lock-'));
  const file = path.join(directory, 'pgdata.pid');
  try {
    const release = await lockDataDirectory(file);
    t.is(readFileSync(file, 'utf8'), String(process.pid));
    const refused = await t.throwsAsync(lockDataDirectory(file, 300));
    t.regex(refused.message, new RegExp(`in use by process ${process.pid}`));
    // Released while another waits: the waiter gets it.
    const waiting = lockDataDirectory(file, 5000);
    await sleep(200);
    release();
    const second = await waiting;
    second();
    // A holder that is gone (a process that has exited) leaves a stale file: it is taken over.
    const gone = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => gone.once('exit', resolve));
    writeFileSync(file, String(gone.pid));
    const third = await lockDataDirectory(file, 300);
    t.is(readFileSync(file, 'utf8'), String(process.pid));
    third();
    t.false(existsSync(file));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
