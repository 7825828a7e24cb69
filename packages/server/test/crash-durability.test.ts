import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { createClient, type SvcClient } from '@svc/client';
import type { DownloadPlan } from '@svc/schemas';
import type { Sequelize } from 'sequelize';
import { createLogger } from '../src/index.ts';
import { openDatabase } from '../src/db/database.ts';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';
import { freePort } from '@svc/testing/free-port';
import { calculateJob, postJob } from './helpers/jobs.ts';
import { checkCreditBooks, creditChat, type CreditBooks } from './helpers/crash-credits.ts';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startServerProcess, type ServerProcess } from '@svc/testing/server-process';

/**
 * kill -9 under a mixed write load, several rounds, each followed by a restart on the same data:
 * every write that was acknowledged is there and consistent. Blackboard puts are readable; a
 * created key works; an acknowledged rotation left the old key dead and the new one working, and
 * no key is half-rotated; every acknowledged download completion has its pull (the count moved
 * at least that much, never more than was attempted) and repeats as `already-recorded`; every
 * acknowledged (202) job submission exists and its Idempotency-Key answers the same job id again;
 * every acknowledged (200) credit-funded chat has its receipt, whose key replays the same
 * completion at no cost, and the books balance: the ledger sums equal the account, every receipt
 * has its commit ledger row and every commit its receipt, and granted = spendable + reserved + spent.
 * PostgreSQL promises a committed transaction survives a crash; the embedded database keeps
 * committed data across a process crash (not an OS crash: fsync is off).
 *
 * SVC_CRASH_ROUNDS sets the rounds (default 3).
 */
const ROUNDS = Number(process.env.SVC_CRASH_ROUNDS ?? 3);
const WORKERS = 6;
const OPERATOR_TOKEN = 'crash-test-operator-token-0123456789';
const ENV = {
  SVC_OPERATOR_TOKEN: OPERATOR_TOKEN,
  SVC_SIGNING_SECRET: 'crash-test-signing-secret-0123456789-abcdef',
  SVC_CATALOG_DEMO: 'on',
  SVC_BLACKBOARD_IP_PUTS_PER_HOUR: '1000000',
  SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR: '1000000',
  SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR: '1000000',
  SVC_DEVELOPER_KEYS_MAX_ACTIVE: '1000',
  // Caps out of the way: the load measures durability, not admission.
  SVC_JOBS_MAX_ACTIVE_PER_PRINCIPAL: '100000',
  SVC_JOBS_MAX_ACTIVE_GLOBAL: '100000',
  SVC_JOBS_MAX_ACTIVE_ITEMS_PER_PRINCIPAL: '100000',
  SVC_JOBS_MAX_ACTIVE_ITEMS_GLOBAL: '100000',
  SVC_JOBS_MAX_RETAINED_PER_PRINCIPAL: '100000',
  SVC_JOBS_MAX_RETAINED_GLOBAL: '100000',
};
/** More than the load can spend in its rounds, so every refusal is the kill's, never a 402. */
const CREDITS_GRANTED = 1_000_000;
const ARTIFACT = 'prompt-injection-rules';
const FILE = 'rules.jsonl';

let database: TestDatabase;
let server: ServerProcess | undefined;
test.before(async () => {
  database = await createTestDatabase();
  // One port for every restart: the OAuth issuer is the public URL, and the agent's token must stay valid.
  (ENV as Record<string, string>).SVC_PORT = String(await freePort());
});

test.after.always(async () => {
  server?.child.kill('SIGKILL');
  await server?.exited;
  await database?.drop();
});

/** What the load saw acknowledged, and what it only attempted. */
interface Ledger {
  puts: Array<{ key: string; id: string }>;
  keys: Map<string, { secret: string; rotatedTo?: string }>;
  rotationsAttempted: Set<string>;
  completions: Array<{ token: string; caller: string }>;
  completionsAttempted: number;
  jobs: Array<{ key: string; body: string; jobId: string }>;
  chats: Array<{ key: string; body: string; completionId: string }>;
  chatsAttempted: number;
}

function everyKindAcknowledged(ledger: Ledger): boolean {
  return ledger.puts.length > 0 && ledger.keys.size > 0 && ledger.completions.length > 0 && ledger.jobs.length > 0 && ledger.chats.length > 0;
}

async function load(
  client: (token?: string) => SvcClient,
  baseUrl: string,
  agentToken: string,
  workKey: string,
  plan: DownloadPlan['files'][number],
  ledger: Ledger,
  round: number,
  stop: AbortSignal,
): Promise<void> {
  let sequence = 0;
  const agent = client(agentToken);
  const worker = async (workerId: number) => {
    while (!stop.aborted) {
      const n = `${round}-${workerId}-${sequence++}`;
      const kind = sequence % 6;
      try {
        if (kind === 4) {
          const key = `crash-job-${n}`;
          const body = JSON.stringify(calculateJob(1, `${sequence} * 2`));
          const answer = await postJob(baseUrl, workKey, body, { 'idempotency-key': key });
          if (answer.status === 202) ledger.jobs.push({ key, body, jobId: ((await answer.json()) as { job_id: string }).job_id });
          else await answer.body?.cancel();
        } else if (kind === 5) {
          const key = `crash-chat-${n}`;
          const body = JSON.stringify({ messages: [{ role: 'user', content: `Crash question ${n}?` }] });
          ledger.chatsAttempted++;
          const answer = await creditChat(baseUrl, workKey, body, key);
          if (answer.status === 200) ledger.chats.push({ key, body, completionId: ((await answer.json()) as { id: string }).id });
          else await answer.body?.cancel();
        } else if (kind === 0 || kind === 1) {
          const key = `crash:${n}`;
          const answer = await client().blackboard.put({ body: { key, value: { text: `put ${n}` } } });
          ledger.puts.push({ key, id: answer.id });
        } else if (kind === 2) {
          // Rotate a key acknowledged earlier and never rotated; otherwise make one.
          const candidate = [...ledger.keys].find(([id, key]) => !key.rotatedTo && !ledger.rotationsAttempted.has(id));
          if (candidate && sequence % 8 === 2) {
            ledger.rotationsAttempted.add(candidate[0]);
            const rotated = await agent.credentials.rotate({ params: { credential_id: candidate[0] } });
            candidate[1].rotatedTo = rotated.credential.credential_id;
            ledger.keys.set(rotated.credential.credential_id, { secret: rotated.secret });
          } else {
            const created = await agent.credentials.create({ body: { name: `crash ${n}`, scopes: ['models:read'] } });
            ledger.keys.set(created.credential.credential_id, { secret: created.secret });
          }
        } else {
          const caller = `crash-caller-${n}`;
          const started = await client(caller).withResponse.catalog.download({ params: { id: ARTIFACT, path: FILE } });
          const token = started.data.headers.get('x-svc-completion-token')!;
          ledger.completionsAttempted++;
          await client(caller).catalog.completeDownload({
            params: { id: ARTIFACT, path: FILE },
            body: { sha256: plan.sha256, sizeBytes: plan.sizeBytes, completionToken: token },
          });
          ledger.completions.push({ token, caller });
        }
      } catch {
        // Cut off by the kill: not acknowledged, so nothing is promised.
        if (!stop.aborted) await sleep(5);
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)));
}

test.serial(`kill -9 under a mixed write load, ${ROUNDS} rounds: every acknowledged write survives, consistent`, async (t) => {
  const ledger: Ledger = {
    puts: [],
    keys: new Map(),
    rotationsAttempted: new Set(),
    completions: [],
    completionsAttempted: 0,
    jobs: [],
    chats: [],
    chatsAttempted: 0,
  };
  server = await startServerProcess(database, ENV);
  const clientFor = (base: string) => (token?: string) => createClient({ baseUrl: base, apiUrl: base, token, retry: 0, timeout: 10_000 });
  const first = clientFor(server.baseUrl);
  const session = await first().oauth.login({ clientName: 'crash test' });
  // One developer key for jobs and paid calls (not in the ledger's keys: the load never rotates it).
  const workKey = (
    await first(session.accessToken).credentials.create({
      body: { name: 'crash work', scopes: ['jobs:read', 'jobs:write', 'billing:read', 'billing:write', 'inference:invoke'] },
    })
  ).secret;
  const agentId = (await first(session.accessToken).oauth.whoami()).id;
  const plan = (await first().catalog.downloadPlan({ params: { id: ARTIFACT } })).files.find((file) => file.path === FILE)!;
  const downloadsAtStart = (await first().catalog.artifact({ params: { id: ARTIFACT } })).downloads;
  // Credits go in through the ledger, as a paid checkout's webhook would put them. The embedded
  // database has one owner at a time, so the server stops for the grant (on PostgreSQL too: one path).
  await server.stop();
  await withDatabase((sequelize) => sequelize.transaction((transaction) => grantCredits(sequelize, transaction, agentId, CREDITS_GRANTED, 'crash-test-grant')));
  server = await startServerProcess(database, ENV);

  for (let round = 1; round <= ROUNDS; round++) {
    const stop = new AbortController();
    const running = load(clientFor(server.baseUrl), server.baseUrl, session.accessToken, workKey, plan, ledger, round, stop.signal);
    await sleep(1000 + Math.floor(Math.random() * 1500));
    // On a busy machine a short round may acknowledge none of some kind: the first round waits
    // (bounded) until every kind has one, so the checks below always have each kind to check.
    for (const deadline = performance.now() + 15_000; round === 1 && !everyKindAcknowledged(ledger) && performance.now() < deadline; ) await sleep(50);
    server.child.kill('SIGKILL');
    await server.exited;
    stop.abort();
    await running;
    server = await startServerProcess(database, ENV);
  }
  const client = clientFor(server.baseUrl);

  // Blackboard: every acknowledged put reads back.
  for (const put of ledger.puts) {
    const page = await client().blackboard.get({ query: { key: put.key } });
    if (!page.items.some((item) => item.id === put.id)) t.fail(`acknowledged put ${put.id} (${put.key}) is gone`);
  }

  // Keys: acknowledged ones work or were (acknowledged or not) rotated to one that exists.
  const owned = new Map<string, { status: string; replaced_by: string | null }>();
  for (let cursor: string | undefined, more = true; more; ) {
    const page = await client(session.accessToken).credentials.list({ query: { limit: 100, ...(cursor ? { cursor } : {}) } });
    for (const row of page.data) owned.set(row.credential_id, { status: row.status, replaced_by: row.replaced_by });
    cursor = page.next_cursor ?? undefined;
    more = Boolean(cursor);
  }
  for (const [id, key] of ledger.keys) {
    const stored = owned.get(id);
    if (!stored) {
      t.fail(`acknowledged key ${id} is gone`);
      continue;
    }
    const works = (await fetch(`${server.baseUrl}/v1/whoami`, { headers: { authorization: `Bearer ${key.secret}` } })).status === 200;
    if (key.rotatedTo) {
      t.is(stored.status, 'rotated', `${id} was rotated (acknowledged)`);
      t.is(stored.replaced_by, key.rotatedTo, `${id} names its replacement`);
      t.false(works, `the rotated key ${id} is dead`);
    } else if (stored.status === 'active') {
      t.true(works, `the active key ${id} works`);
    } else {
      // A rotation that committed but whose answer the kill swallowed: it must be whole.
      t.is(stored.status, 'rotated', `${id} is ${stored.status}`);
      t.truthy(stored.replaced_by && owned.get(stored.replaced_by), `${id}'s replacement exists`);
      t.false(works);
    }
  }
  for (const [id, row] of owned) {
    if (row.status === 'rotated') t.truthy(row.replaced_by && owned.has(row.replaced_by), `no half-rotated key: ${id} -> ${row.replaced_by}`);
  }

  // Completions: each acknowledged one has its pull and repeats as already-recorded.
  const downloads = (await client().catalog.artifact({ params: { id: ARTIFACT } })).downloads - downloadsAtStart;
  t.true(downloads >= ledger.completions.length, `pulls ${downloads} >= acknowledged ${ledger.completions.length}`);
  t.true(downloads <= ledger.completionsAttempted, `pulls ${downloads} <= attempted ${ledger.completionsAttempted}`);
  for (const completion of ledger.completions) {
    const again = await client(completion.caller).catalog.completeDownload({
      params: { id: ARTIFACT, path: FILE },
      body: { sha256: plan.sha256, sizeBytes: plan.sizeBytes, completionToken: completion.token },
    });
    t.is(again.status, 'already-recorded');
  }

  // Jobs: each acknowledged submission exists, and its key answers the same job again.
  for (const job of ledger.jobs) {
    const stored = await fetch(`${server.baseUrl}/v1/jobs/${job.jobId}`, { headers: { authorization: `Bearer ${workKey}` } });
    if (stored.status !== 200) t.fail(`acknowledged job ${job.jobId} (${job.key}) is gone: ${stored.status}`);
    await stored.body?.cancel();
    const replay = await postJob(server.baseUrl, workKey, job.body, { 'idempotency-key': job.key });
    t.is(replay.status, 202, `${job.key} replays`);
    t.is(replay.headers.get('idempotent-replayed'), 'true');
    t.is(((await replay.json()) as { job_id: string }).job_id, job.jobId, `${job.key} answers its first job`);
  }

  // Credit-funded calls: each acknowledged one replays its completion without a new charge.
  for (const chat of ledger.chats) {
    const replay = await creditChat(server.baseUrl, workKey, chat.body, chat.key);
    t.is(replay.status, 200, `${chat.key} replays`);
    t.is(replay.headers.get('idempotent-replayed'), 'true');
    t.is(((await replay.json()) as { id: string }).id, chat.completionId, `${chat.key} answers its first completion`);
  }

  t.true(everyKindAcknowledged(ledger), 'every kind of write was acknowledged at least once');
  await server.stop();
  server = undefined;

  // The books, read straight from the database once the server is down.
  const books: CreditBooks = await withDatabase((sequelize) => checkCreditBooks(sequelize, agentId));
  const receiptKeys = new Set(books.receiptKeys);
  for (const chat of ledger.chats) if (!receiptKeys.has(chat.key)) t.fail(`acknowledged paid call ${chat.key} has no receipt`);
  t.true(books.receiptKeys.length >= ledger.chats.length, `receipts ${books.receiptKeys.length} >= acknowledged ${ledger.chats.length}`);
  t.true(books.receiptKeys.length <= ledger.chatsAttempted, `receipts ${books.receiptKeys.length} <= attempted ${ledger.chatsAttempted}`);
  t.is(new Set(books.receiptKeys).size, books.receiptKeys.length, 'one receipt per key: nothing charged twice');
  t.deepEqual(books.ledgerSums, books.account, 'the ledger sums equal the account');
  t.deepEqual(books.receiptsWithoutCommit, [], 'no receipt without its ledger row');
  t.deepEqual(books.commitsWithoutReceipt, [], 'no commit ledger row without its receipt');
  t.is(books.account.spendable + books.account.reserved + books.spent, CREDITS_GRANTED, 'granted = spendable + reserved + spent');
  t.log(
    `${ROUNDS} rounds of kill -9 (${database.kind}); writes checked: ${ledger.puts.length} puts, ${ledger.keys.size} keys (${[...ledger.keys.values()].filter((key) => key.rotatedTo).length} rotated), ` +
      `${ledger.completions.length} completions, ${ledger.jobs.length} jobs, ${ledger.chats.length} paid calls (${books.receiptKeys.length} receipts)`,
  );
});

/** The test's own connection to the server's database (only while no server holds the embedded one). */
async function withDatabase<T>(use: (sequelize: Sequelize) => Promise<T>): Promise<T> {
  const opened = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolMax: 2, log: createLogger('silent') });
  try {
    return await use(opened.sequelize);
  } finally {
    await opened.close();
  }
}
