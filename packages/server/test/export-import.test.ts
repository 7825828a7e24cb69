import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import pg from 'pg';
import { createClient } from '@svc/client';
import { startFakeStripe } from '@svc/testing/fake-stripe';
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

const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString('hex')}`;
const STRIPE_ENV = { STRIPE_SECRET_KEY: 'sk_test_fake_for_svc', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET };
const ENV = { SVC_CATALOG_DEMO: 'on', SVC_BLACKBOARD_IP_PUTS_PER_HOUR: '10000', ...STRIPE_ENV };
/** The source runs no job workers at its second start, so the job it takes then is still queued when it stops. */
const SOURCE_ENV = { ...ENV, SVC_JOBS_WORKERS: '0' };

/** A call with a bearer token and a JSON body (or none), answering status and JSON. */
async function call(baseUrl: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}
const spendCredits = (baseUrl: string, token: string, question: string) =>
  call(
    baseUrl,
    token,
    'POST',
    '/v1/credits/chat/completions',
    { messages: [{ role: 'user', content: question }] },
    { 'idempotency-key': randomBytes(8).toString('hex') },
  );

test('an embedded instance exported into another database reads back the same: board, keys and their limits, credits, receipts, jobs, responses, A2A tasks, downloads', async (t) => {
  t.timeout(420_000);
  const stripe = await startFakeStripe();
  const source = await createTestDatabase({ adminUrl: undefined });
  const target: TestDatabase = await createTestDatabase();
  // Without PostgreSQL the copy goes into a second data directory's embedded database.
  const targetDir = target.kind === 'embedded' ? target.dataDir : source.dataDir;
  const targetWord = target.databaseUrl ?? target.dataDir;
  // One address for both servers: the receipts' issuer and the tokens' audience are the public URL.
  const port = String(await freePort());
  try {
    // First start, with job workers: a job run to its end.
    let server = await startServerProcess(source, { ...ENV, SVC_STRIPE_API_BASE: stripe.url, SVC_PORT: port });
    const client = (token?: string) => createClient({ baseUrl: server.baseUrl, apiUrl: server.baseUrl, token, retry: 0 });
    const session = await client().oauth.login({ clientName: 'export test' });
    const agent = client(session.accessToken);
    const limited = await agent.credentials.create({ body: { name: 'limited', scopes: ['models:read'], limits: { requests_per_minute: 2 } } });
    const worker = await agent.credentials.create({ body: { name: 'worker', scopes: ['jobs:read', 'jobs:write'] } });
    const buyer = await agent.credentials.create({ body: { name: 'buyer', scopes: ['billing:read', 'billing:write', 'inference:invoke'] } });
    const done = (await (await postJob(server.baseUrl, worker.secret, JSON.stringify(calculateJob(1, '1 + 1')), { 'idempotency-key': 'done-job' })).json()) as {
      job_id: string;
    };
    const jobOf = async (id: string) => (await call(server.baseUrl, worker.secret, 'GET', `/v1/jobs/${id}`)).body as { status: string };
    await waitUntil('the first job to finish', async () => (await jobOf(done.job_id)).status === 'completed', { timeoutMs: 60_000, intervalMs: 200 });
    const doneBefore = await jobOf(done.job_id);
    await server.stop();
    server = await startServerProcess(source, { ...SOURCE_ENV, SVC_STRIPE_API_BASE: stripe.url, SVC_PORT: port });
    // Credits bought through the processor's hosted page (the fake Stripe delivers the signed event), then spent.
    stripe.deliverWebhooksTo(`${server.baseUrl}/webhooks/processor`, WEBHOOK_SECRET);
    const checkout = await call(server.baseUrl, buyer.secret, 'POST', '/v1/billing/processor/checkout-session', { pack_code: 'starter_1000' });
    t.is(checkout.status, 201, JSON.stringify(checkout.body));
    t.is((await fetch(checkout.body.url, { method: 'POST', redirect: 'manual' })).status, 303);
    await waitUntil('the paid event to be delivered', () => stripe.deliveries.find((delivery) => delivery.status === 200), { timeoutMs: 30_000 });
    const spent = await spendCredits(server.baseUrl, buyer.secret, 'What is svc?');
    t.is(spent.status, 200, JSON.stringify(spent.body));
    const balanceBefore = (await call(server.baseUrl, buyer.secret, 'GET', '/v1/billing/balance')).body as { spendable: number; reserved: number };
    t.true(balanceBefore.spendable > 0 && balanceBefore.spendable < 1000, `bought 1000, spent some: ${JSON.stringify(balanceBefore)}`);
    // A stored response and an A2A task.
    const stored = await call(server.baseUrl, buyer.secret, 'POST', '/v1/responses', {
      model: 'svc-extractive-chat',
      input: 'How do I post on the blackboard?',
      store: true,
    });
    t.is(stored.status, 200, JSON.stringify(stored.body));
    const a2a = (body: unknown) => call(server.baseUrl, buyer.secret, 'POST', '/a2a', body);
    const task = await a2a({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: {
        message: {
          messageId: 'm-move',
          role: 'user',
          parts: [{ kind: 'text', text: 'Moving day. The board moves. The keys move too.' }],
          metadata: { skill: 'summarize' },
        },
      },
    });
    t.is(task.body.result?.status?.state, 'completed', JSON.stringify(task.body));
    const taskBefore = (await a2a({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: task.body.result.id } })).body.result;
    const responseBefore = (await call(server.baseUrl, buyer.secret, 'GET', `/v1/responses/${stored.body.id}`)).body;
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
    await stripe.close();

    const exported = await runServerCommand(['export', '--to', targetWord, '--json'], { SVC_DATA_DIR: source.dataDir });
    t.is(exported.code, 0, exported.stderr);
    const result = JSON.parse(exported.stdout) as { rows: number; tables: Array<{ table: string; rows: number }>; carried: string[]; notes: string[] };
    t.true(
      result.tables.some((table) => table.table === 'svc_migrations' && table.rows > 0),
      'the migration history moved',
    );
    t.true(result.tables.some((table) => table.table === 'blackboard_items' && table.rows >= 4));
    if (target.databaseUrl) {
      // Every table the migrations made was carried, whatever its name: a table left out fails here.
      const targetClient = new pg.Client({ connectionString: target.databaseUrl });
      await targetClient.connect();
      try {
        const tables = await targetClient.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1");
        t.deepEqual(result.tables.map((table) => table.table).sort(), tables.rows.map((row) => row.name).sort());
        for (const name of ['billing_ledger', 'billing_accounts', 'billing_checkout_sessions', 'svc_tasks', 'svc_jobs'])
          t.true((result.tables.find((table) => table.table === name)?.rows ?? 0) > 0, `${name} carried rows`);
        // The ledger explains the balance: its deltas add up to the account's numbers.
        const sums = await targetClient.query(
          'SELECT (SELECT sum(spendable_delta) FROM billing_ledger) = (SELECT sum(spendable) FROM billing_accounts) AND (SELECT sum(reserved_delta) FROM billing_ledger) = (SELECT sum(reserved) FROM billing_accounts) AS balanced',
        );
        t.true(sums.rows[0].balanced, 'the ledger balances after the move');
      } finally {
        await targetClient.end();
      }
    }
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
    t.deepEqual(await jobOf(done.job_id), doneBefore, 'the finished job reads back the same');
    t.deepEqual((await call(server.baseUrl, buyer.secret, 'GET', '/v1/billing/balance')).body, balanceBefore, 'the balance is the same');
    t.deepEqual((await call(server.baseUrl, buyer.secret, 'GET', `/v1/responses/${stored.body.id}`)).body, responseBefore, 'the stored response is the same');
    t.deepEqual(
      (await a2a({ jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { id: task.body.result.id } })).body.result,
      taskBefore,
      'the A2A task is the same',
    );
    // The bought credits spend on the new server too.
    t.is((await spendCredits(server.baseUrl, buyer.secret, 'What is svc?')).status, 200);
    const after = (await call(server.baseUrl, buyer.secret, 'GET', '/v1/billing/balance')).body as { spendable: number };
    t.true(after.spendable < balanceBefore.spendable, 'a spend after the move takes from the moved balance');
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
    await stripe.close().catch(() => {});
    await source.drop();
    await target.drop();
  }
});
