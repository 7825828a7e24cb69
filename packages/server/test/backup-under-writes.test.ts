import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { extract } from 'tar';
import { freePort } from '@svc/testing/free-port';
import { SERVER_BIN, killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';

/**
 * `svc-server backup` while a client writes 100 board posts a second. On PostgreSQL the backup is
 * taken while the server serves them: it must hold every write acknowledged before it began,
 * none sent after it ended, exactly the rows its manifest reports, and nothing torn (each post
 * whole, and each post's parent, acknowledged before the post was sent, there with it). The
 * embedded database belongs to its server, so there the server is stopped mid-stream (SIGTERM
 * drains) and every acknowledged write must be in the backup taken then.
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
// The board's hourly caps lifted, so every post is written: the test is about the backup, not the caps.
const ENV = Object.fromEntries([
  ['SVC_CATALOG_DEMO', 'off'],
  ...['IP_PUTS', 'GLOBAL_POSTS', 'PRINCIPAL_POSTS', 'CHANNEL_POSTS'].map((cap) => [`SVC_BLACKBOARD_${cap}_PER_HOUR`, '1000000']),
  ...['GLOBAL_BYTES', 'PRINCIPAL_BYTES', 'CHANNEL_BYTES'].map((cap) => [`SVC_BLACKBOARD_${cap}_PER_HOUR`, '1000000000']),
]);
const RATE_PER_SECOND = 100;

interface Write {
  n: number;
  sentAt: number;
  parentId: string | undefined;
  id?: string;
  ackedAt?: number;
  status?: number;
}

/** Sends a post every 10 ms without waiting for the last (each names the newest acknowledged post as its parent) until stopped. */
function writeSteadily(server: () => ServerProcess) {
  const writes: Write[] = [];
  let newest: string | undefined;
  let n = 0;
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();
  const send = () => {
    const write: Write = { n: n++, sentAt: performance.now(), parentId: newest };
    writes.push(write);
    const sent = fetch(`${server().baseUrl}/api/v1/blackboard/put`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: `steady:w${write.n}`, value: { text: `write ${write.n}` }, ...(write.parentId ? { parent_id: write.parentId } : {}) }),
    })
      .then(async (response) => {
        write.status = response.status;
        if (response.status !== 200 && response.status !== 201) return;
        const { id } = (await response.json()) as { id: string };
        Object.assign(write, { id, ackedAt: performance.now() });
        newest = id;
      })
      .catch(() => {})
      .finally(() => inFlight.delete(sent));
    inFlight.add(sent);
  };
  // Timers run late on a loaded machine: each tick sends what the schedule calls for by now.
  const timer = setInterval(() => {
    while (n < ((performance.now() - start) / 1000) * RATE_PER_SECOND) send();
  }, 5);
  return {
    writes,
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
}

/** The posts of the restored database, read through a server started on it. */
async function restoredPosts(server: ServerProcess, writes: Write[]) {
  const found = new Map<number, { id: string; text: string; parent_id?: string | null }>();
  for (const write of writes) {
    const answer = await fetch(`${server.baseUrl}/api/v1/blackboard/get?key=${encodeURIComponent(`steady:w${write.n}`)}`);
    const body = (await answer.json()) as { items: Array<{ id: string; item: { text: string; parent_id?: string } }> };
    const item = body.items[0];
    if (item) found.set(write.n, { id: item.id, text: item.item.text, parent_id: item.item.parent_id ?? null });
  }
  return found;
}

test('a backup taken during 100 writes a second restores every write acknowledged before it, nothing sent after it, and nothing torn', async (t) => {
  t.timeout(400_000);
  const source = await createTestDatabase();
  const target = await createTestDatabase();
  const work = await mkdtemp(path.join(tmpdir(), 'svc-backup-writes-'));
  const file = path.join(work, 'svc.backup');
  const port = String(await freePort());
  try {
    let server = await startServerProcess(source, { ...ENV, SVC_PORT: port });
    const writer = writeSteadily(() => server);
    while (writer.writes.filter((write) => write.id).length < 50) await new Promise((resolve) => setTimeout(resolve, 20));
    if (source.kind === 'embedded') await server.stop();
    const began = performance.now();
    const backup = await runServerCommand(['backup', file, '--json'], settingsOf(source));
    const ended = performance.now();
    t.is(backup.code, 0, backup.stderr);
    // A second more of writes after the backup, which must not be in it.
    if (source.kind === 'postgres') await new Promise((resolve) => setTimeout(resolve, 1000));
    await writer.stop();
    if (source.kind === 'postgres') await server.stop();
    const during = writer.writes.filter((write) => write.sentAt >= began && write.sentAt <= ended);
    const seconds = (ended - began) / 1000;
    t.log(
      `${source.kind}: backup ${seconds.toFixed(1)} s; ${writer.writes.length} posts sent, ${writer.writes.filter((write) => write.id).length} acknowledged; during the backup ${during.length} sent (${(during.length / seconds).toFixed(0)}/s), ${during.filter((write) => write.id).length} acknowledged`,
    );
    const statuses: Record<string, number> = {};
    for (const write of writer.writes) statuses[String(write.status ?? 'none')] = (statuses[String(write.status ?? 'none')] ?? 0) + 1;
    t.log('answers to the posts by status', statuses);
    if (source.kind === 'postgres') {
      t.true(during.length / seconds >= RATE_PER_SECOND * 0.9, 'posts were sent at 100 a second while the backup ran');
      t.true(
        during.some((write) => write.id),
        'the server acknowledged posts while the backup ran',
      );
    }
    const unpacked = path.join(work, 'unpacked');
    await mkdir(unpacked);
    await extract({ file, cwd: unpacked }, ['manifest.json']);
    const manifest = JSON.parse(await readFile(path.join(unpacked, 'manifest.json'), 'utf8')) as { tables: Array<{ table: string; rows: number }> };
    const reported = manifest.tables.find((table) => table.table === 'blackboard_items')?.rows;

    const restored = await runServerCommand(['restore', file, '--json'], settingsOf(target));
    t.is(restored.code, 0, restored.stderr);
    server = await startServerProcess(target, { ...ENV, SVC_PORT: port });
    const posts = await restoredPosts(server, writer.writes);
    await server.stop();

    t.is(posts.size, reported ?? -1, 'the restore holds exactly the posts the backup reported');
    const acknowledgedBefore = writer.writes.filter((write) => write.id && write.ackedAt! < began);
    t.deepEqual(
      acknowledgedBefore.filter((write) => posts.get(write.n)?.id !== write.id).map((write) => write.n),
      [],
      'every post acknowledged before the backup began is restored, under its id',
    );
    t.deepEqual(
      writer.writes.filter((write) => write.sentAt > ended && posts.has(write.n)).map((write) => write.n),
      [],
      'no post sent after the backup ended is in it',
    );
    const restoredIds = new Set([...posts.values()].map((post) => post.id));
    const torn = [...posts].filter(([n, post]) => {
      const write = writer.writes[n]!;
      return (
        post.text !== `write ${n}` ||
        (write.id !== undefined && post.id !== write.id) ||
        (post.parent_id ?? undefined) !== write.parentId ||
        (write.parentId !== undefined && !restoredIds.has(write.parentId))
      );
    });
    t.deepEqual(
      torn.map(([n]) => n),
      [],
      'each restored post is whole, and its parent is restored with it',
    );
  } finally {
    await rm(work, { recursive: true, force: true });
    await source.drop();
    await target.drop();
  }
});
