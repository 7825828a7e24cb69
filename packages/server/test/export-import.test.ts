import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { createClient } from '@svc/client';
import { freePort } from '@svc/testing/free-port';
import { SERVER_BIN, killAllServerProcesses, startServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { waitUntil } from '@svc/testing/wait-until';
import { calculateJob, postJob } from './helpers/jobs.ts';

/**
 * `svc-server export` as a user runs it: an embedded instance filled through the API, stopped,
 * exported to PostgreSQL (the embedded database of a second data directory when the suite has
 * no PostgreSQL), and a server started on the copy reads everything back the same.
 */
test.after.always(() => killAllServerProcesses());

/** Runs `svc-server <args>` to its end, as a user would. */
function runServerCommand(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_') && name !== 'DATABASE_URL'));
  const child = spawn(process.execPath, [SERVER_BIN, ...args], { env: { ...inherited, SVC_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const ENV = { SVC_CATALOG_DEMO: 'on', SVC_BLACKBOARD_IP_PUTS_PER_HOUR: '10000' };
/** The source runs no job workers, so the job it takes is still queued when it stops. */
const SOURCE_ENV = { ...ENV, SVC_JOBS_WORKERS: '0' };

test('an embedded instance exported into another database reads back the same: board, keys and their limits, receipts, jobs, downloads', async (t) => {
  t.timeout(300_000);
  const source = await createTestDatabase({ adminUrl: undefined });
  const target: TestDatabase = await createTestDatabase();
  // Without PostgreSQL the copy goes into a second data directory's embedded database.
  const targetDir = target.kind === 'embedded' ? target.dataDir : source.dataDir;
  const targetWord = target.databaseUrl ?? target.dataDir;
  // One address for both servers: the receipts' issuer and the tokens' audience are the public URL.
  const port = String(await freePort());
  try {
    let server = await startServerProcess(source, { ...SOURCE_ENV, SVC_PORT: port });
    const client = (token?: string) => createClient({ baseUrl: server.baseUrl, apiUrl: server.baseUrl, token, retry: 0 });
    const session = await client().oauth.login({ clientName: 'export test' });
    const agent = client(session.accessToken);
    const limited = await agent.credentials.create({ body: { name: 'limited', scopes: ['models:read'], limits: { requests_per_minute: 2 } } });
    const worker = await agent.credentials.create({ body: { name: 'worker', scopes: ['jobs:read', 'jobs:write'] } });
    // Posts, a thread of replies, a tombstone.
    const board = client().blackboard;
    const root = await board.put({ body: { key: 'moving:day', value: { text: 'the root' } } });
    const reply = await board.put({ body: { key: 'moving:day', value: { text: 'a reply' }, parent_id: root.id } });
    await board.put({ body: { key: 'moving:day', value: { text: 'a reply to the reply' }, parent_id: reply.id } });
    const retracted = await board.put({ body: { key: 'moving:day', value: { text: 'retracted' } } });
    await board.tombstone({ body: { id: retracted.id, edit_token: retracted.edit_token! } });
    // A hosted file pulled and verified: a download record and its receipt.
    const host = new URL(server.baseUrl).host;
    const downloads = await mkdtemp(path.join(tmpdir(), 'svc-export-'));
    const pulled = await createClient({
      baseUrl: server.baseUrl,
      apiUrl: server.baseUrl,
      token: 'export-downloader',
      storagePolicy: { hosts: [host], allowHttpLoopback: true },
    }).catalog.verifiedDownload({
      artifactId: 'support-tickets-sample',
      path: 'tickets.csv',
      destination: path.join(downloads, 'tickets.csv'),
    });
    const receipt = pulled.completion.receipt;
    const submitted = await postJob(server.baseUrl, worker.secret, JSON.stringify(calculateJob(2, '6 * 7')), { 'idempotency-key': 'moving-job' });
    t.is(submitted.status, 202);
    const job = (await submitted.json()) as { job_id: string; status: string };
    t.is(job.status, 'queued');
    const before = {
      board: (await board.get({ query: { key: 'moving:day' } })).items,
      artifact: await client().catalog.artifact({ params: { id: 'support-tickets-sample' } }),
      keys: (await agent.credentials.list({ query: { limit: 100 } })).data,
    };
    await server.stop();

    const exported = await runServerCommand(['export', '--to', targetWord, '--json'], { SVC_DATA_DIR: source.dataDir });
    t.is(exported.code, 0, exported.stderr);
    const result = JSON.parse(exported.stdout) as { rows: number; tables: Array<{ table: string; rows: number }>; carried: string[]; notes: string[] };
    t.true(
      result.tables.some((table) => table.table === 'svc_migrations' && table.rows > 0),
      'the migration history moved',
    );
    t.true(result.tables.some((table) => table.table === 'blackboard_items' && table.rows >= 4));
    if (target.kind === 'embedded') {
      t.deepEqual(result.carried.sort(), ['objects/', 'operator-token', 'signing-secret', 'storage-signing-key']);
      t.is(await readFile(path.join(targetDir, 'signing-secret'), 'utf8'), await readFile(path.join(source.dataDir, 'signing-secret'), 'utf8'));
    } else t.regex(result.notes.join('\n'), /SVC_DATA_DIR=.*signing-secret/);

    // A second export into the same target is refused: it holds svc data now.
    const again = await runServerCommand(['export', '--to', targetWord], { SVC_DATA_DIR: source.dataDir });
    t.is(again.code, 1);
    t.regex(again.stderr, /--replace/);

    server = await startServerProcess(
      { ...target, dataDir: targetDir },
      { ...ENV, SVC_PORT: port, ...(target.databaseUrl ? { DATABASE_URL: target.databaseUrl } : {}) },
    );
    t.deepEqual((await board.get({ query: { key: 'moving:day' } })).items, before.board, 'the board, its thread and its tombstone read back the same');
    t.deepEqual(await client().catalog.artifact({ params: { id: 'support-tickets-sample' } }), before.artifact);
    t.deepEqual((await agent.credentials.list({ query: { limit: 100 } })).data, before.keys, "the agent's token still works, and its keys are the same");
    // The receipt made before the move verifies with the keys the new server publishes.
    const verified = await client().receipts.verify(receipt);
    t.is(verified.claims.record_id, pulled.completion.recordId);
    // The job queued before the move runs on the new server.
    const finished = await waitUntil(
      () => 'the queued job to finish',
      async () => {
        const answer = (await (await fetch(`${server.baseUrl}/v1/jobs/${job.job_id}`, { headers: { authorization: `Bearer ${worker.secret}` } })).json()) as {
          status: string;
        };
        return ['queued', 'running'].includes(answer.status) ? undefined : answer;
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    t.is(finished.status, 'completed');
    // The limited key still holds to 2 requests a minute (in one minute's window).
    if (Date.now() % 60_000 > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));
    const models = () => fetch(`${server.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${limited.secret}` } });
    t.is((await models()).status, 200);
    t.is((await models()).status, 200);
    const third = await models();
    t.is(third.status, 429);
    t.is(((await third.json()) as { code: string }).code, 'key_limit_exceeded:requests_per_minute');
    await server.stop();
    await rm(downloads, { recursive: true, force: true });
  } finally {
    await source.drop();
    await target.drop();
  }
});
