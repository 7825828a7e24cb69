import test from 'ava';
import pg from 'pg';
import { signInAgent } from '@svc/testing/identity';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { BUSY_COUNTS, SLOT_SETTLE_MS } from '../src/http/key-limit-slots.ts';

/**
 * A busy key's requests-per-minute slots come in chunks that are renewed as each one's 100 ms end
 * (docs/limits.md, "Chunks of slots for a busy key"; issue 42): over a burst of many settle
 * periods, only the requests that made the key busy (and those after a minute's turn) are counted
 * one by one in the database. Before the renewal every period began with the key counted one by
 * one again until it was found busy: `BUSY_COUNTS` writes or more per period.
 *
 * The statements are counted where the server sends them, on `pg`'s client (this process's
 * server, on either database): the resolver's statement that counts a request, told apart by its
 * bucket parameter and its counting flag, and the chunk reservations of the key's bucket.
 */
let database: TestDatabase;
let svc: TestServer;

test.before(async () => {
  database = await createTestDatabase();
  svc = await startTestServer({ database });
});
test.after.always(async () => {
  await svc?.close();
  await database?.drop();
});

interface Sent {
  text: string;
  values: unknown[];
}

/** Every statement this process sends through `pg` while `run` runs (the server's pool included). */
async function watchStatements<T>(run: () => Promise<T>): Promise<{ result: T; sent: Sent[] }> {
  const sent: Sent[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config, second] = args as [string | { text: string; values?: unknown[] }, unknown];
    // (text, values, callback), (text, callback) or ({ text, values, name }).
    const values = Array.isArray(second) ? second : [];
    if (typeof config === 'string') sent.push({ text: config, values });
    else if (config && typeof config.text === 'string') sent.push({ text: config.text, values: config.values ?? values });
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    return { result: await run(), sent };
  } finally {
    pg.Client.prototype.query = query;
  }
}

const BURST_MS = 2_000;
const CONNECTIONS = 8;

test('a busy key keeps its slot chunks renewed: over a burst of 20 settle periods only the requests that made it busy are counted one by one', async (t) => {
  // A burst that crosses a minute's turn counts the key one by one again: started after it.
  if (Date.now() % 60_000 > 60_000 - BURST_MS - 5_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));
  const agent = await signInAgent(svc);
  const created = await agent.client.credentials.create({
    body: { name: 'renewal', scopes: ['models:read'], limits: { requests_per_minute: 1_000_000 } },
  });
  const bucket = `limits:rpm:key:${created.credential.credential_id}`;
  // The key read once, so the burst's requests find it in memory (docs/identity.md, "Credential cache").
  const first = await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${created.secret}` } });
  t.is(first.status, 200);
  await first.arrayBuffer();
  const { result: calls, sent } = await watchStatements(async () => {
    const until = Date.now() + BURST_MS;
    let served = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (Date.now() < until) {
          const response = await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${created.secret}` } });
          await response.arrayBuffer();
          if (response.status !== 200) throw new Error(`answered ${response.status}`);
          served++;
        }
      }),
    );
    return served;
  });
  const ofBucket = sent.filter((statement) => statement.values.includes(bucket));
  // The resolver's statement with its counting flag set (its sixth parameter): a request counted one by one.
  const countedOneByOne = ofBucket.filter((statement) => statement.text.includes('svc_developer_keys') && statement.values[5] === true).length;
  const reservations = ofBucket.filter((statement) => /^\s*UPDATE svc_rate_counters SET hits = hits \+/.test(statement.text)).length;
  const periods = BURST_MS / SLOT_SETTLE_MS;
  t.log(
    `${calls} requests in ${BURST_MS} ms: ${countedOneByOne} counted one by one, ${reservations} chunk reservations, ${ofBucket.length} statements of the bucket`,
  );
  // Busy enough for the check to mean something: more requests than the old code counted one by one per period.
  t.true(calls >= periods * BUSY_COUNTS, `${calls} requests`);
  t.true(reservations >= 2, `${reservations} chunk reservations`);
  // Before the renewal: at least BUSY_COUNTS per settle period (80 here). After: the first BUSY_COUNTS
  // and a few more for a chunk refused or late under load.
  t.true(countedOneByOne <= 3 * BUSY_COUNTS, `${countedOneByOne} of ${calls} requests counted one by one over ${periods} settle periods`);
});
