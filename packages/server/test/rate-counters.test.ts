import test from 'ava';
import { QueryTypes } from 'sequelize';
import { openDatabase, type Database } from '../src/db/database.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { consumeWindow, pruneWindows } from '../src/db/rate-counters.ts';
import { createLogger } from '../src/observability/logger.ts';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';

let testDatabase: TestDatabase;
let database: Database;
const log = createLogger('silent');

test.before(async () => {
  testDatabase = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDatabase.databaseUrl, dataDir: testDatabase.dataDir, poolMax: 4, log });
  await runMigrations(database.sequelize, log);
});
test.after.always(async () => {
  await database?.close();
  await testDatabase?.drop();
});

const now = new Date('2026-11-21T10:30:00Z');

test('a window admits exactly its cap of hits, refuses the next, and a refusal changes nothing', async (t) => {
  const limit = { bucket: 'test:hits', windowSeconds: 3600, maxHits: 3 };
  for (let hit = 1; hit <= 3; hit++) t.true((await consumeWindow(database.sequelize, limit, { now })).allowed, `hit ${hit}`);
  const refused = await consumeWindow(database.sequelize, limit, { now });
  t.false(refused.allowed);
  t.is(refused.exhausted, 'hits');
  t.is(refused.retryAfterSeconds, 1800, 'until the end of the fixed UTC hour');
  const [row] = await database.sequelize.query<{ hits: string }>("SELECT hits FROM svc_rate_counters WHERE bucket = 'test:hits'", { type: QueryTypes.SELECT });
  t.is(Number(row!.hits), 3);
  t.true((await consumeWindow(database.sequelize, limit, { now: new Date('2026-11-21T11:00:00Z') })).allowed, 'the next window starts empty');
});

test('an amount cap admits up to its limit and refuses one unit past it', async (t) => {
  const limit = { bucket: 'test:bytes', windowSeconds: 3600, maxHits: 100, maxAmount: 10 };
  t.true((await consumeWindow(database.sequelize, { ...limit, amount: 6 }, { now })).allowed);
  t.true((await consumeWindow(database.sequelize, { ...limit, amount: 4 }, { now })).allowed, 'exactly at the cap');
  const refused = await consumeWindow(database.sequelize, { ...limit, amount: 1 }, { now });
  t.false(refused.allowed);
  t.is(refused.exhausted, 'amount');
  t.false(
    (await consumeWindow(database.sequelize, { bucket: 'test:bytes-one', windowSeconds: 60, maxHits: 5, maxAmount: 10, amount: 11 }, { now })).allowed,
    'a single call over the cap',
  );
});

test('concurrent hits never pass the cap', async (t) => {
  const limit = { bucket: 'test:race', windowSeconds: 3600, maxHits: 5 };
  const decisions = await Promise.all(Array.from({ length: 12 }, () => consumeWindow(database.sequelize, limit, { now })));
  t.is(decisions.filter((decision) => decision.allowed).length, 5);
});

test('pruning drops ended windows and keeps standing counters at the epoch', async (t) => {
  await consumeWindow(database.sequelize, { bucket: 'prune:old', windowSeconds: 3600, maxHits: 5 }, { now: new Date('2026-11-01T00:00:00Z') });
  await consumeWindow(database.sequelize, { bucket: 'prune:recent', windowSeconds: 3600, maxHits: 5 }, { now });
  await database.sequelize.query("INSERT INTO svc_rate_counters (bucket, window_start, hits, amount) VALUES ('prune:standing', 'epoch', 1, 0)");
  await pruneWindows(database.sequelize, new Date('2026-11-20T00:00:00Z'));
  const buckets = (
    await database.sequelize.query<{ bucket: string }>("SELECT bucket FROM svc_rate_counters WHERE bucket LIKE 'prune:%'", { type: QueryTypes.SELECT })
  )
    .map((row) => row.bucket)
    .sort();
  t.deepEqual(buckets, ['prune:recent', 'prune:standing']);
});
