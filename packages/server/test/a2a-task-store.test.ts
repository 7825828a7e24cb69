import test from 'ava';
import { pino } from 'pino';
import { QueryTypes } from 'sequelize';
import { a2aLimits } from '@svc/schemas';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { runMigrations } from '../src/db/migrate.ts';
import migration from '../src/db/migrations/20261207T0610-a2a-tasks-on-store.ts';
import { A2A_KIND, storable, taskOf } from '../src/features/discovery/a2a-task-view.ts';
import { TaskStore, type TaskRow } from '../src/features/tasks/task-store.ts';

/**
 * A2A tasks on the durable task store, on a real database, where only time can reach: the
 * running cap taken by many starts at once and the per-caller bound on kept tasks (createClaimedWithin),
 * a runner that stopped renewing its lease (what `kill -9` leaves) read as failed with its reason,
 * a cancel read `canceled` at once, retention by the store's TTL, a result too large to keep, and
 * the migration that moves the rows of the old `a2a_tasks` table onto the store (and back). Serial:
 * the migration test moves every A2A row of the database.
 */
const log = pino({ level: 'silent' });
let testDatabase: TestDatabase;
let database: Database;
let store: TaskStore;

test.before(async () => {
  testDatabase = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDatabase.databaseUrl, dataDir: testDatabase.dataDir, poolMax: 4, log });
  await runMigrations(database.sequelize, log);
  const config = loadConfig({ DATABASE_URL: testDatabase.databaseUrl, SVC_DATA_DIR: testDatabase.dataDir, SVC_TASKS_LEASE_SECONDS: '1' });
  store = new TaskStore(database.sequelize, config.tasks);
});
test.after.always(async () => {
  await database?.close();
  await testDatabase?.drop();
});

const CAP = { running: a2aLimits.maxRunningPerPrincipal, kept: a2aLimits.maxKeptPerPrincipal };
let counter = 0;
const a2aTask = (owner: string) => ({
  id: `a2a-store-${++counter}`,
  owner,
  kind: A2A_KIND,
  maxAttempts: 1,
  input: { contextId: 'ctx', skill: 'summarize', history: [{ messageId: 'm', role: 'user', parts: [{ text: 'hello' }] }] },
});
const row = (id: string) =>
  database.sequelize
    .query<TaskRow>('SELECT * FROM svc_tasks WHERE id = :id', { replacements: { id }, type: QueryTypes.SELECT })
    .then((rows): TaskRow | undefined => rows[0]);

test.serial(`${3 * CAP.running} starts at once store exactly ${CAP.running} running tasks; an ended one frees its place`, async (t) => {
  const owner = 'owner-capped';
  const claims = await Promise.all(Array.from({ length: 3 * CAP.running }, () => store.createClaimedWithin(CAP, a2aTask(owner))));
  const running = claims.filter((claim) => claim !== undefined);
  t.is(running.length, CAP.running);
  t.is(await store.createClaimedWithin(CAP, a2aTask(owner)), undefined, 'at the cap');
  t.truthy(await store.createClaimedWithin(CAP, a2aTask('owner-other')), "another owner's tasks do not count");
  t.truthy(await store.createClaimedWithin(CAP, { ...a2aTask(owner), kind: 'other.kind' }), 'tasks of another kind do not count');
  t.true(await store.finish(running[0]!, { status: 'completed', result: { artifacts: [] } }));
  t.truthy(await store.createClaimedWithin(CAP, a2aTask(owner)), 'an ended task frees its place');
  t.is(await store.createClaimedWithin(CAP, a2aTask(owner)), undefined);
});

test.serial(`a caller keeps at most ${CAP.kept} ended tasks: the oldest goes as a new one is stored`, async (t) => {
  const owner = 'owner-kept';
  const cap = { running: 1, kept: 3 };
  const ids: string[] = [];
  for (let index = 0; index < 4; index++) {
    const claimed = (await store.createClaimedWithin(cap, a2aTask(owner)))!;
    ids.push(claimed.row.id);
    t.true(await store.finish(claimed, { status: 'completed', result: { artifacts: [] } }));
  }
  const kept = await database.sequelize.query<{ id: string }>('SELECT id FROM svc_tasks WHERE owner = :owner ORDER BY created_at', {
    replacements: { owner },
    type: QueryTypes.SELECT,
  });
  t.deepEqual(
    kept.map((entry) => entry.id),
    ids.slice(1),
    'the three newest (the fourth stored deleted the first)',
  );
});

test.serial('a runner that stops renewing (kill -9) leaves a task that reads failed with its reason once the lease ran out, never working', async (t) => {
  const claimed = (await store.createClaimedWithin(CAP, a2aTask('owner-killed')))!;
  t.is(taskOf(claimed.row).state, 'working');
  await database.sequelize.query("UPDATE svc_tasks SET lease_expires_at = now() - interval '1 second' WHERE id = :id", {
    replacements: { id: claimed.row.id },
  });
  const { ended } = await store.reapExpiredLeases();
  t.true(ended.some((task) => task.id === claimed.row.id));
  const read = taskOf((await store.get(claimed.row.id, 'owner-killed'))!);
  t.is(read.state, 'failed');
  t.regex(JSON.stringify(read.statusMessage), /runner stopped.*Send the message again/);
  t.false(await store.finish(claimed, { status: 'completed', result: { artifacts: [] } }), 'the lost runner writes nothing');
});

test.serial('a cancel reads canceled at once, before the runner has stopped; the store ends it cancelled', async (t) => {
  const claimed = (await store.createClaimedWithin(CAP, a2aTask('owner-cancel')))!;
  const asked = (await store.cancel(claimed.row.id, 'owner-cancel'))!;
  t.is(asked.status, 'in_progress');
  t.is(taskOf(asked).state, 'canceled');
  t.regex(JSON.stringify(taskOf(asked).statusMessage), /Canceled by the caller/);
  t.true(await store.finish(claimed, { status: 'cancelled' }));
  t.is(taskOf((await store.get(claimed.row.id, 'owner-cancel'))!).state, 'canceled');
  t.is(await store.get(claimed.row.id, 'owner-other'), undefined, "another owner's task is not found");
});

test.serial('an ended task is read until its expiry (the store result TTL), then not found, and the prune deletes it', async (t) => {
  const [young, old] = [(await store.createClaimedWithin(CAP, a2aTask('owner-ttl')))!, (await store.createClaimedWithin(CAP, a2aTask('owner-ttl')))!];
  for (const claimed of [young, old]) t.true(await store.finish(claimed, { status: 'completed', result: { artifacts: [] } }));
  t.truthy((await row(young.row.id))?.expires_at, 'an ended task has an expiry');
  await database.sequelize.query("UPDATE svc_tasks SET expires_at = now() + interval '1 minute' WHERE id = :id", { replacements: { id: young.row.id } });
  await database.sequelize.query("UPDATE svc_tasks SET expires_at = now() - interval '1 second' WHERE id = :id", { replacements: { id: old.row.id } });
  t.is((await store.get(young.row.id, 'owner-ttl'))?.id, young.row.id);
  t.is(await store.get(old.row.id, 'owner-ttl'), undefined, 'past its expiry: not found at once');
  await store.prune();
  t.truthy(await row(young.row.id));
  t.is(await row(old.row.id), undefined);
});

test.serial(`a result up to ${a2aLimits.maxStoredResultBytes} bytes is kept; a larger one keeps a note`, (t) => {
  const artifact = (text: string) => [{ artifactId: 'r', name: 'summarize', parts: [{ text }] }];
  const overhead = Buffer.byteLength(JSON.stringify(artifact('')));
  const kept = storable(artifact('a'.repeat(a2aLimits.maxStoredResultBytes - overhead)));
  t.is((kept[0]!.parts[0] as { text: string }).text.length, a2aLimits.maxStoredResultBytes - overhead);
  const noted = storable(artifact('a'.repeat(a2aLimits.maxStoredResultBytes - overhead + 1)));
  t.is(
    (noted[0]!.parts[0] as { text: string }).text,
    `The answer was ${a2aLimits.maxStoredResultBytes + 1} bytes, over the ${a2aLimits.maxStoredResultBytes} a stored task keeps; it was sent whole when the task ran.`,
  );
});

test.serial('the migration moves the rows of a2a_tasks onto the store, each read as before; its down moves them back', async (t) => {
  const sequelize = database.sequelize;
  // Back to the table as it was (its down), with rows written by the version before.
  await sequelize.transaction((transaction) => migration.down({ sequelize, transaction }));
  await sequelize.query(
    `INSERT INTO a2a_tasks (id, owner, context_id, skill, state, status_message, artifacts, history, cancel_requested, deadline_at, created_at, updated_at) VALUES
     ('a2a-old-done', 'owner-old', 'ctx-1', 'summarize', 'completed', NULL, '[{"artifactId":"a2a-old-done-result","name":"summarize","parts":[{"text":"short"}]}]',
      '[{"messageId":"m1","role":"user","parts":[{"text":"hello"}]}]', false, now() + interval '1 minute', now() - interval '1 hour', now() - interval '59 minutes'),
     ('a2a-old-failed', 'owner-old', 'ctx-2', 'rag', 'failed', '{"messageId":"a2a-old-failed-failed","role":"agent","parts":[{"text":"HTTP 422 invalid: no"}]}', '[]',
      '[{"messageId":"m2","role":"user","parts":[{"text":"q"}]}]', false, now() + interval '1 minute', now() - interval '2 hours', now() - interval '2 hours'),
     ('a2a-old-canceled', 'owner-old', 'ctx-3', 'rag', 'canceled', '{"messageId":"a2a-old-canceled-canceled","role":"agent","parts":[{"text":"Canceled."}]}', '[]',
      '[]', true, now() + interval '1 minute', now() - interval '3 hours', now() - interval '3 hours'),
     ('a2a-old-working', 'owner-old', 'ctx-4', 'pdf-extract', 'working', NULL, '[]', '[]', false, now() - interval '1 second', now() - interval '2 minutes', now() - interval '2 minutes')`,
  );
  await sequelize.query("DELETE FROM svc_migrations WHERE name = '20261207T0610-a2a-tasks-on-store'");
  t.deepEqual(await runMigrations(sequelize, log), ['20261207T0610-a2a-tasks-on-store']);
  const tables = await sequelize.query("SELECT 1 FROM pg_tables WHERE tablename = 'a2a_tasks'", { type: QueryTypes.SELECT });
  t.is(tables.length, 0, 'the old table is gone');
  const read = async (id: string) => taskOf((await store.get(id, 'owner-old'))!);
  const done = await read('a2a-old-done');
  t.like(done, { id: 'a2a-old-done', contextId: 'ctx-1', skill: 'summarize', state: 'completed' });
  t.deepEqual(done.artifacts, [{ artifactId: 'a2a-old-done-result', name: 'summarize', parts: [{ text: 'short' }] }]);
  t.deepEqual(done.history, [{ messageId: 'm1', role: 'user', parts: [{ text: 'hello' }] }]);
  const failed = await read('a2a-old-failed');
  t.is(failed.state, 'failed');
  t.deepEqual(failed.statusMessage?.parts, [{ text: 'HTTP 422 invalid: no' }]);
  t.is((await store.get('a2a-old-failed', 'owner-old'))?.error_message, 'HTTP 422 invalid: no');
  t.is((await read('a2a-old-canceled')).state, 'canceled');
  t.is((await read('a2a-old-working')).state, 'working', 'its runner was a replica of the version before');
  // Its old deadline is its lease: the store fails it, as the old table read it failed past the deadline.
  await store.reapExpiredLeases();
  const lost = await read('a2a-old-working');
  t.is(lost.state, 'failed');
  t.regex(JSON.stringify(lost.statusMessage), /runner stopped/);
  // Down and up again: the rows go back to the old table and return unchanged.
  await sequelize.transaction(async (transaction) => {
    await migration.down({ sequelize, transaction });
    const back = await sequelize.query<{ id: string; state: string }>("SELECT id, state FROM a2a_tasks WHERE owner = 'owner-old' ORDER BY id", {
      type: QueryTypes.SELECT,
      transaction,
    });
    t.deepEqual(back, [
      { id: 'a2a-old-canceled', state: 'canceled' },
      { id: 'a2a-old-done', state: 'completed' },
      { id: 'a2a-old-failed', state: 'failed' },
      { id: 'a2a-old-working', state: 'failed' },
    ]);
    await migration.up({ sequelize, transaction });
  });
  t.deepEqual((await read('a2a-old-done')).artifacts, done.artifacts);
});
