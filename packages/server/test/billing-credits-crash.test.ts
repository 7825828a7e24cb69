import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { QueryTypes, type Sequelize } from 'sequelize';
import { createClient } from '@svc/client';
import { openDatabase } from '../src/db/database.ts';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';
import { createLogger } from '../src/observability/logger.ts';
import { freePort } from '@svc/testing/free-port';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';

/**
 * A `svc-server` killed with SIGKILL while credit-funded chat calls are in flight loses no
 * credit: after a second process starts on the same database (on PGlite, the same data
 * directory the dead one used) and the hold TTL has passed, its housekeeping releases the
 * orphaned holds, and spendable + receipts == granted, reserved 0, the ledger sums equal the
 * account, and every call answered 200 before the kill has its receipt.
 *
 * The database is opened in this process only while no server runs (PGlite is one process's).
 */
const GRANTED = 100_000;
const HOLD_TTL_SECONDS = 5; // the smallest the config allows
const WORKERS = 16;
const MAX_ROUNDS = 4;
const ENV: Record<string, string> = {
  SVC_SIGNING_SECRET: 'credits-crash-signing-secret-0123456789-abcd',
  SVC_CREDIT_HOLD_TTL_SECONDS: String(HOLD_TTL_SECONDS),
};
const log = createLogger('silent');

let database: TestDatabase;
let server: ServerProcess | undefined;
test.before(async () => {
  database = await createTestDatabase();
  // One port for every process: the OAuth issuer is the public URL.
  ENV.SVC_PORT = String(await freePort());
});
test.after.always(async () => {
  killAllServerProcesses();
  await server?.exited;
  await database?.drop();
});

/** Opens the database in this process (no server may be running on PGlite), runs `work`, closes it. */
async function withDatabase<T>(work: (sequelize: Sequelize) => Promise<T>): Promise<T> {
  const opened = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolMax: 2, log });
  try {
    return await work(opened.sequelize);
  } finally {
    await opened.close();
  }
}

async function accountState(sequelize: Sequelize, principalId: string) {
  const one = async <T extends object>(sql: string) => (await sequelize.query<T>(sql, { replacements: { id: principalId }, type: QueryTypes.SELECT }))[0]!;
  const account = await one<{ spendable: string; reserved: string }>('SELECT spendable, reserved FROM billing_accounts WHERE principal_id = :id');
  const ledger = await one<{ spendable: string; reserved: string }>(
    'SELECT sum(spendable_delta) AS spendable, sum(reserved_delta) AS reserved FROM billing_ledger WHERE principal_id = :id',
  );
  const receipts = await one<{ count: number }>('SELECT count(*)::int AS count FROM billing_receipts WHERE principal_id = :id');
  const held = await one<{ count: number }>("SELECT count(*)::int AS count FROM billing_holds WHERE principal_id = :id AND status = 'held'");
  const keys = await sequelize.query<{ idempotency_key: string }>('SELECT idempotency_key FROM billing_receipts WHERE principal_id = :id', {
    replacements: { id: principalId },
    type: QueryTypes.SELECT,
  });
  return {
    account: { spendable: Number(account.spendable), reserved: Number(account.reserved) },
    ledger: { spendable: Number(ledger.spendable), reserved: Number(ledger.reserved) },
    receipts: receipts.count,
    held: held.count,
    receiptKeys: new Set(keys.map((row) => row.idempotency_key)),
  };
}

/** Credit-funded calls from `WORKERS` callers, each with its own key, until `stop`; keys answered 200 go to `answered`. */
async function burst(baseUrl: string, token: string, round: number, answered: Set<string>, stop: AbortSignal): Promise<void> {
  const worker = async (workerId: number) => {
    for (let call = 0; !stop.aborted; call++) {
      const key = `crash-${round}-${workerId}-${call}`;
      try {
        const response = await fetch(`${baseUrl}/v1/credits/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ model: 'svc-extractive-chat', messages: [{ role: 'user', content: `What is svc? (call ${key})` }] }),
        });
        const body = await response.text();
        if (response.status === 200 && body.includes('chat.completion')) answered.add(key);
      } catch {
        // Cut off by the kill: never acknowledged, so nothing is promised for it.
        if (!stop.aborted) await sleep(5);
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, index) => worker(index)));
}

test.serial('kill -9 with credit calls in flight: after hold expiry no credit is lost', async (t) => {
  t.timeout(240_000);
  server = await startServerProcess(database, ENV);
  const clientAt = (token?: string) => createClient({ baseUrl: server!.baseUrl, apiUrl: server!.baseUrl, token, retry: 0, timeout: 10_000 });
  const session = await clientAt().oauth.login({ clientName: 'credits crash test' });
  const agent = clientAt(session.accessToken);
  const principalId = (await agent.oauth.whoami()).id;
  const key = await agent.credentials.create({ body: { name: 'credits crash', scopes: ['billing:read', 'billing:write', 'inference:invoke'] } });
  await server.stop();
  await withDatabase((sequelize) => sequelize.transaction((transaction) => grantCredits(sequelize, transaction, principalId, GRANTED, 'crash-test-grant')));

  // Kill mid-burst until a kill leaves holds behind (almost always the first): that is the case under test.
  const answered = new Set<string>();
  let orphaned = { held: 0, reserved: 0 };
  for (let round = 1; round <= MAX_ROUNDS && orphaned.held === 0; round++) {
    server = await startServerProcess(database, ENV);
    const stop = new AbortController();
    const running = burst(server.baseUrl, key.secret, round, answered, stop.signal);
    // Kill once this round's calls are being answered (a loaded machine may take seconds to get
    // there), then a random moment later, with calls still in flight.
    const answeredBefore = answered.size;
    for (const deadline = performance.now() + 30_000; answered.size === answeredBefore && performance.now() < deadline; ) await sleep(50);
    await sleep(300 + Math.floor(Math.random() * 1000));
    await server.kill();
    stop.abort();
    await running;
    server = undefined;
    const afterKill = await withDatabase((sequelize) => accountState(sequelize, principalId));
    orphaned = { held: afterKill.held, reserved: afterKill.account.reserved };
    t.log(`round ${round}: ${answered.size} answered so far, ${afterKill.held} holds left by the kill`);
  }
  t.true(orphaned.held > 0, 'a kill left credit holds of calls in flight');
  t.is(orphaned.reserved, orphaned.held, 'each orphaned hold reserves its one credit');
  t.true(answered.size > 0, 'calls were answered before the kill');

  // A second process on the same database: once the TTL passed, its housekeeping gives the credits back.
  server = await startServerProcess(database, ENV);
  const billing = clientAt(key.secret).billing;
  const deadline = performance.now() + 90_000;
  let balance = await billing.balance();
  while (balance.reserved > 0 && performance.now() < deadline) {
    await sleep(500);
    balance = await billing.balance();
  }
  t.is(balance.reserved, 0, 'the orphaned holds were released');
  await server.stop();
  server = undefined;

  const final = await withDatabase((sequelize) => accountState(sequelize, principalId));
  t.deepEqual(final.account, { spendable: balance.spendable, reserved: 0 });
  t.is(final.held, 0);
  t.is(final.account.spendable + final.receipts, GRANTED, 'spendable + receipts == granted: no credit lost, none charged twice');
  t.deepEqual(final.ledger, final.account, 'the ledger sums equal the account');
  const missing = [...answered].filter((answeredKey) => !final.receiptKeys.has(answeredKey));
  t.deepEqual(missing, [], 'every call answered 200 has its receipt');
  t.log(`${database.kind}: ${answered.size} calls answered, ${final.receipts} receipts, ${orphaned.held} holds orphaned by the kill and released`);
});
