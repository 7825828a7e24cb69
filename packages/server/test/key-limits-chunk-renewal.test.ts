import test from 'ava';
import pg from 'pg';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { signInAgent } from '@svc/testing/identity';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { BUSY_COUNTS, SLOT_SETTLE_MS } from '../src/http/key-limit-slots.ts';
import { BUSY_RESERVATIONS } from '../src/http/key-limit-tokens.ts';

/**
 * A busy key's chunks are renewed as each one's 100 ms end, and a call that finds none while the
 * next is being reserved waits for it (docs/limits.md, "Chunks of slots for a busy key" and
 * "Places and tokens in chunks"; issue 42): over a burst of many settle periods, only the calls
 * that made the key busy (and those after a minute's turn) go to the database one by one.
 * - Requests-per-minute slots: before their renewal every period began with the key counted one by
 *   one again until it was found busy, `BUSY_COUNTS` writes or more per period.
 * - Tokens per minute: before the wait, the calls that came while the next chunk was being
 *   reserved each read the minute's row and reserved their own tokens in it.
 *
 * The statements are counted where the server sends them, on `pg`'s client (this process's
 * server, on either database), by the key's bucket among their parameters.
 */
let database: TestDatabase;
let fake: FakeUpstream;
let svc: TestServer;

test.before(async () => {
  database = await createTestDatabase();
  fake = await startFakeOpenAiUpstream();
  svc = await startTestServer({
    database,
    env: { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_MODELS: 'answer-a', SVC_UPSTREAM_API_KEY: 'sk-fake' },
  });
});
test.after.always(async () => {
  await svc?.close();
  await fake?.close();
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
const PERIODS = BURST_MS / SLOT_SETTLE_MS;

/** A key with `limits`, read once so the burst finds it in memory (docs/identity.md, "Credential cache"). */
async function busyKey(limits: Record<string, number>) {
  // A burst that crosses a minute's turn goes one by one again: started after it.
  if (Date.now() % 60_000 > 60_000 - BURST_MS - 5_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));
  const agent = await signInAgent(svc);
  const created = await agent.client.credentials.create({ body: { name: 'renewal', scopes: ['models:read', 'inference:invoke'], limits } });
  const first = await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${created.secret}` } });
  await first.arrayBuffer();
  if (first.status !== 200) throw new Error(`answered ${first.status}`);
  return { credentialId: created.credential.credential_id, secret: created.secret };
}

/** `CONNECTIONS` callers, each calling again once answered, for `ms`: the calls served. */
async function load(call: () => Promise<Response>, ms: number): Promise<number> {
  const until = Date.now() + ms;
  let served = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < until) {
        const response = await call();
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`answered ${response.status}`);
        served++;
      }
    }),
  );
  return served;
}

/**
 * The route warmed first with the operator token (no limits: its first calls' module loads and
 * compilation are not the key's), then `BURST_MS` of the key's calls: the calls served and the
 * statements sent meanwhile.
 */
async function burst(call: (token: string) => Promise<Response>, secret: string) {
  await load(() => call(svc.operatorToken), 500);
  return watchStatements(() => load(() => call(secret), BURST_MS));
}

test.serial(
  'requests per minute: a busy key keeps its slot chunks renewed, and over 20 settle periods only the requests that made it busy are counted one by one',
  async (t) => {
    const { credentialId, secret } = await busyKey({ requests_per_minute: 1_000_000 });
    const bucket = `limits:rpm:key:${credentialId}`;
    const { result: calls, sent } = await burst((token) => fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${token}` } }), secret);
    const ofBucket = sent.filter((statement) => statement.values.includes(bucket));
    // The resolver's statement with its counting flag set (its sixth parameter): a request counted one by one.
    const countedOneByOne = ofBucket.filter((statement) => statement.text.includes('svc_developer_keys') && statement.values[5] === true).length;
    const reservations = ofBucket.filter((statement) => /SET hits = hits (\+|- \$3::bigint \+ renewal\.size)/.test(statement.text)).length;
    t.log(
      `${calls} requests in ${BURST_MS} ms: ${countedOneByOne} counted one by one, ${reservations} chunk reservations, ${ofBucket.length} statements of the bucket`,
    );
    t.true(calls >= PERIODS, `${calls} requests: the key was not busy`);
    t.true(reservations >= 2, `${reservations} chunk reservations`);
    // Before the renewal: BUSY_COUNTS or more in every settle period (91 of 274 requests at load
    // 12). After: the first BUSY_COUNTS and their like once or twice more when a period passed
    // with no request at load 15 (6 to 18 of 110 to 530 seen).
    t.true(countedOneByOne <= 4 * BUSY_COUNTS + calls / 20, `${countedOneByOne} of ${calls} requests counted one by one over ${PERIODS} settle periods`);
  },
);

test.serial('tokens per minute: a busy key waits for its next chunk of tokens instead of reading and reserving in the row one by one', async (t) => {
  const { credentialId, secret } = await busyKey({ tokens_per_minute: 1_000_000_000 });
  const bucket = `limits:tpm:key:${credentialId}`;
  const { result: calls, sent } = await burst(
    (token) =>
      fetch(`${svc.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'answer-a', messages: [{ role: 'user', content: 'hello' }] }),
      }),
    secret,
  );
  const ofBucket = sent.filter((statement) => statement.values.includes(bucket));
  // The minute's tokens read before a call (no chunk open) and a call's own reservation in the row.
  const reads = ofBucket.filter((statement) => /^\s*SELECT amount FROM svc_rate_counters/.test(statement.text)).length;
  const ownReservations = ofBucket.filter((statement) =>
    /^\s*INSERT INTO svc_rate_counters[\s\S]*VALUES \(\$1::text, \$2::timestamptz, 0,/.test(statement.text),
  ).length;
  t.log(
    `${calls} calls in ${BURST_MS} ms: ${reads} reads of the minute, ${ownReservations} reservations of a call's own, ${ofBucket.length} statements of the bucket`,
  );
  t.true(calls >= PERIODS, `${calls} calls: the key was not busy`);
  // Before the wait: 43 reads of 332 calls, 50 of 113 (load 12-17). After: the calls that made the
  // key busy, once or twice more when a period passed with no call (8 to 17 of 44 to 464 seen).
  const bound = 4 * BUSY_RESERVATIONS + calls / 20;
  t.true(reads <= bound, `${reads} reads of the minute for ${calls} calls`);
  t.true(ownReservations <= bound, `${ownReservations} reservations of a call's own for ${calls} calls`);
});

test.serial(
  'a key under all three limits on a JSON route (no tokens reserved): a burst reads the minute’s tokens and takes places one by one only while the key is found busy',
  async (t) => {
    const { credentialId, secret } = await busyKey({ requests_per_minute: 1_000_000, concurrent_requests: 1_000, tokens_per_minute: 1_000_000_000 });
    const { result: calls, sent } = await burst((token) => fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${token}` } }), secret);
    // Sequelize writes replacements into the text; prepared statements carry them as values.
    const ofKey = sent.filter((statement) => statement.text.includes(credentialId) || statement.values.some((value) => String(value).includes(credentialId)));
    const tokenReads = ofKey.filter(
      (statement) => /^\s*SELECT amount FROM svc_rate_counters/.test(statement.text) && statement.values.includes(`limits:tpm:key:${credentialId}`),
    ).length;
    // A request's own place: a transaction that inserts one `lease_` row, and its delete as the request ends.
    const ownPlaces = ofKey.filter((statement) => /INSERT INTO svc_limit_leases/.test(statement.text) && statement.text.includes("'lease_")).length;
    const countedOneByOne = ofKey.filter((statement) => statement.text.includes('svc_developer_keys') && statement.values[5] === true).length;
    t.log(
      `${calls} requests in ${BURST_MS} ms: ${tokenReads} reads of the minute's tokens, ${ownPlaces} places of their own, ${countedOneByOne} counted one by one, ${ofKey.length} statements of the key`,
    );
    t.true(calls >= PERIODS, `${calls} requests: the key was not busy`);
    const bound = 4 * BUSY_COUNTS + calls / 20;
    t.true(tokenReads <= bound, `${tokenReads} reads of the minute's tokens for ${calls} requests`);
    t.true(ownPlaces <= bound, `${ownPlaces} places of their own for ${calls} requests`);
    t.true(countedOneByOne <= bound, `${countedOneByOne} of ${calls} requests counted one by one`);
    t.true(ofKey.length <= calls / 10 + 4 * PERIODS, `${ofKey.length} statements of the key for ${calls} requests`);
  },
);
