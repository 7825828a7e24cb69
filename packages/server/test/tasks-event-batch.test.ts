import test from 'ava';
import { pino } from 'pino';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { MAX_EVENT_BATCH, TaskEventBatch } from '../src/features/tasks/task-event-batch.ts';
import { TaskSignals } from '../src/features/tasks/task-signals.ts';
import { TaskStore } from '../src/features/tasks/task-store.ts';

/**
 * A run's events written as a group commit (task-event-batch.ts) on a real database: events
 * emitted without waiting are stored once each, numbered consecutively in emit order, in fewer
 * statements than events (each write takes what was emitted while the one before was in flight,
 * at most MAX_EVENT_BATCH), so a reader resuming after any N reads each later event once; a runner
 * that lost its lease stores nothing.
 */
const log = pino({ level: 'silent' });
let testDatabase: TestDatabase;
let database: Database;
let store: TaskStore;
let signals: TaskSignals;

test.before(async () => {
  testDatabase = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDatabase.databaseUrl, dataDir: testDatabase.dataDir, poolMax: 4, log });
  await runMigrations(database.sequelize, log);
  const config = loadConfig({ DATABASE_URL: testDatabase.databaseUrl, SVC_DATA_DIR: testDatabase.dataDir });
  store = new TaskStore(database.sequelize, config.tasks);
  signals = new TaskSignals({ sequelize: database.sequelize, url: undefined, kind: 'embedded', onError: () => {} });
});
test.after.always(async () => {
  await database?.close();
  await testDatabase?.drop();
});

test(`${2 * MAX_EVENT_BATCH + 3} events emitted at once are stored once each, numbered in emit order, in a few writes; a resume after any N reads the rest once`, async (t) => {
  const claimed = await store.createClaimed({ owner: 'owner', kind: 'batch', input: null });
  let writes = 0;
  let largest = 0;
  const counting = Object.create(store) as TaskStore;
  counting.appendMany = (task, events) => {
    writes++;
    largest = Math.max(largest, events.length);
    return store.appendMany(task, events);
  };
  const batch = new TaskEventBatch(counting, signals, claimed);
  const count = 2 * MAX_EVENT_BATCH + 3;
  const numbers = await Promise.all(Array.from({ length: count }, (_, index) => batch.add('step', { index })));
  await batch.drain();
  t.deepEqual(
    numbers,
    Array.from({ length: count }, (_, index) => index + 1),
  );
  t.true(writes <= 4, `${writes} writes for ${count} events`);
  t.is(largest, MAX_EVENT_BATCH, 'no write takes more than the bound');
  const stored = await store.events(claimed.row.id, 0, 10_000);
  t.deepEqual(
    stored.map((event) => [event.seq, (event.data as { index: number }).index]),
    Array.from({ length: count }, (_, index) => [index + 1, index]),
  );
  for (const after of [0, 1, MAX_EVENT_BATCH, count - 1]) {
    const rest = await store.events(claimed.row.id, after, 10_000);
    t.deepEqual(
      rest.map((event) => event.seq),
      Array.from({ length: count - after }, (_, index) => after + index + 1),
    );
  }
  t.is((await store.get(claimed.row.id, 'owner'))?.event_count, count);
});

test('a runner that lost its lease stores no event; each emit answers undefined', async (t) => {
  const claimed = await store.createClaimed({ owner: 'owner', kind: 'batch', input: null });
  const batch = new TaskEventBatch(store, signals, claimed);
  t.is(await batch.add('first', {}), 1);
  await database.sequelize.query("UPDATE svc_tasks SET lease_owner = 'another' WHERE id = :id", { replacements: { id: claimed.row.id } });
  const late = await Promise.all([batch.add('a', {}), batch.add('b', {}), batch.add('c', {})]);
  await batch.drain();
  t.deepEqual(late, [undefined, undefined, undefined]);
  t.is((await store.events(claimed.row.id, 0)).length, 1);
});
