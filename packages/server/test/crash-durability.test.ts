import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { createClient, type SvcClient } from '@svc/client';
import type { DownloadPlan } from '@svc/schemas';
import { freePort } from './helpers/free-port.ts';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.ts';
import { startServerProcess, type ServerProcess } from './helpers/server-process.ts';

/**
 * kill -9 under a mixed write load, several rounds, each followed by a restart on the same data:
 * every write that was acknowledged is there and consistent. Blackboard puts are readable; a
 * created key works; an acknowledged rotation left the old key dead and the new one working, and
 * no key is half-rotated; every acknowledged download completion has its pull (the count moved
 * at least that much, never more than was attempted) and repeats as `already-recorded`.
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
};
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
}

async function load(client: (token?: string) => SvcClient, agentToken: string, plan: DownloadPlan['files'][number], ledger: Ledger, round: number, stop: AbortSignal): Promise<void> {
  let sequence = 0;
  const agent = client(agentToken);
  const worker = async (workerId: number) => {
    while (!stop.aborted) {
      const n = `${round}-${workerId}-${sequence++}`;
      const kind = sequence % 4;
      try {
        if (kind === 0 || kind === 1) {
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
          await client(caller).catalog.completeDownload({ params: { id: ARTIFACT, path: FILE }, body: { sha256: plan.sha256, sizeBytes: plan.sizeBytes, completionToken: token } });
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
  const ledger: Ledger = { puts: [], keys: new Map(), rotationsAttempted: new Set(), completions: [], completionsAttempted: 0 };
  server = await startServerProcess(database, ENV);
  const clientFor = (base: string) => (token?: string) => createClient({ baseUrl: base, apiUrl: base, token, retry: 0, timeout: 10_000 });
  const first = clientFor(server.baseUrl);
  const session = await first().oauth.login({ clientName: 'crash test' });
  const plan = (await first().catalog.downloadPlan({ params: { id: ARTIFACT } })).files.find((file) => file.path === FILE)!;
  const downloadsAtStart = (await first().catalog.artifact({ params: { id: ARTIFACT } })).downloads;

  for (let round = 1; round <= ROUNDS; round++) {
    const stop = new AbortController();
    const running = load(clientFor(server.baseUrl), session.accessToken, plan, ledger, round, stop.signal);
    await sleep(1000 + Math.floor(Math.random() * 1500));
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
    const again = await client(completion.caller).catalog.completeDownload({ params: { id: ARTIFACT, path: FILE }, body: { sha256: plan.sha256, sizeBytes: plan.sizeBytes, completionToken: completion.token } });
    t.is(again.status, 'already-recorded');
  }
  t.true(ledger.puts.length > 0 && ledger.keys.size > 0 && ledger.completions.length > 0, 'every kind of write was acknowledged at least once');
  t.log(`${ROUNDS} rounds of kill -9 (${database.kind}); writes checked: ${ledger.puts.length} puts, ${ledger.keys.size} keys (${[...ledger.keys.values()].filter((key) => key.rotatedTo).length} rotated), ${ledger.completions.length} completions`);
  server.child.kill('SIGTERM');
  await server.exited;
  server = undefined;
});
