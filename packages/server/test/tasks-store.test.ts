import test from 'ava';
import { pino } from 'pino';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { Scheduler } from '../src/scheduler.ts';
import { createTasksFeature, type TaskEvent, type Tasks } from '../src/features/tasks/index.ts';
import { TaskStore } from '../src/features/tasks/task-store.ts';

/**
 * The durable task store with two replicas on one database: on PostgreSQL (TEST_DATABASE_URL)
 * two connections pools and two listening connections, as two processes have; on the embedded
 * database (one process owns it) two stores over the one connection. One replica creates, the
 * other runs; reads, cancels and event streams work from either; a runner that stops renewing
 * (what `kill -9` leaves) has its task taken up again, or failed with a reason once its attempts
 * are spent, never left in_progress.
 */
const log = pino({ level: 'silent' });
const env = { SVC_TASKS_LEASE_SECONDS: '1', SVC_TASKS_BACKSTOP_MS: '200', SVC_TASKS_MAX_ATTEMPTS: '2' };
let testDatabase: TestDatabase;
const databases: Database[] = [];
const schedulers: Scheduler[] = [];
const closers: Array<() => Promise<void>> = [];
let a: Tasks;
let b: Tasks;
let shared: Database;

async function replica(): Promise<{ tasks: Tasks; database: Database }> {
  const config = loadConfig({ ...env, DATABASE_URL: testDatabase.databaseUrl, SVC_DATA_DIR: testDatabase.dataDir });
  const database =
    testDatabase.kind === 'postgres' || !shared
      ? await openDatabase({ databaseUrl: testDatabase.databaseUrl, dataDir: testDatabase.dataDir, poolMax: 4, log })
      : shared;
  if (database !== shared) databases.push(database);
  shared ??= database;
  const scheduler = new Scheduler(log);
  schedulers.push(scheduler);
  const feature = createTasksFeature({ config, database, log, scheduler });
  closers.push(feature.close);
  return { tasks: feature.tasks, database };
}

test.before(async () => {
  testDatabase = await createTestDatabase();
  const first = await replica();
  await runMigrations(first.database.sequelize, log);
  a = first.tasks;
  b = (await replica()).tasks;
  // Only b runs `echo` and `wait`: whatever a creates is run by the other replica.
  b.register('echo', async ({ task, emit }) => {
    const { count } = task.input as { count: number };
    for (let index = 1; index <= count; index++) await emit('step', { index });
    return { status: 'completed', result: { echoed: count } };
  });
  b.register('wait', async ({ signal, emit }) => {
    await emit('started', {});
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return { status: 'incomplete', code: 'stopped', message: String(signal.reason) };
  });
});
test.after.always(async () => {
  for (const close of closers) await close();
  for (const scheduler of schedulers) await scheduler.close();
  for (const database of databases) await database.close();
  await testDatabase?.drop();
});

async function collect(stream: AsyncGenerator<TaskEvent> | undefined): Promise<TaskEvent[]> {
  const events: TaskEvent[] = [];
  for await (const event of stream ?? []) events.push(event);
  return events;
}

test.serial('a task created on one replica is run by the other; its events stream in order from the first, and resume after event N', async (t) => {
  const created = await a.create({ owner: 'key:alice', kind: 'echo', input: { count: 5 } });
  t.is(created.status, 'queued');
  const events = await collect(await a.follow(created.id, 'key:alice', 0));
  t.deepEqual(
    events.map((event) => [event.seq, event.type, event.data]),
    [1, 2, 3, 4, 5].map((index) => [index, 'step', { index }]),
  );
  t.like(await a.get(created.id, 'key:alice'), { status: 'completed', result: { echoed: 5 }, attempts: 1, event_count: 5 });
  const resumed = await collect(await b.follow(created.id, 'key:alice', 3));
  t.deepEqual(
    resumed.map((event) => event.seq),
    [4, 5],
  );
});

test.serial('only the owner reads, follows or cancels a task', async (t) => {
  const created = await a.create({ owner: 'key:alice', kind: 'echo', input: { count: 1 } });
  t.is(await b.get(created.id, 'key:bob'), undefined);
  t.is(await a.follow(created.id, 'key:bob', 0), undefined);
  t.is(await a.cancel(created.id, 'key:bob'), undefined);
  await collect(await a.follow(created.id, 'key:alice', 0));
  t.is((await b.get(created.id, 'key:alice'))?.status, 'completed');
});

test.serial('a cancel asked on one replica stops the task running on the other, promptly', async (t) => {
  const created = await a.create({ owner: 'key:alice', kind: 'wait', input: {} });
  const stream = await a.follow(created.id, 'key:alice', 0);
  const first = await stream?.next();
  t.like(first?.value, { seq: 1, type: 'started' });
  const asked = performance.now();
  t.is((await a.cancel(created.id, 'key:alice'))?.status, 'in_progress');
  await collect(stream);
  const ended = await a.get(created.id, 'key:alice');
  t.is(ended?.status, 'cancelled');
  // Woken by the cancel signal, not found by the lease renewal (a third of a 1 s lease) alone.
  t.true(performance.now() - asked < 1_000, `${performance.now() - asked} ms`);
});

test.serial('a queued task cancelled before any runner took it ends cancelled and is never run', async (t) => {
  const store = new TaskStore(shared.sequelize, loadConfig(env).tasks);
  const row = await store.create({ owner: 'key:alice', kind: 'nobody-runs-this', input: {} });
  t.is((await a.cancel(row.id, 'key:alice'))?.status, 'cancelled');
  t.is(await store.claim(['nobody-runs-this']), undefined);
});

test.serial(
  'a runner that stops renewing (kill -9): the task is taken up again after the lease, and failed with a reason once its attempts are spent',
  async (t) => {
    const store = new TaskStore(shared.sequelize, loadConfig(env).tasks);
    // A dead replica: claims an `echo` task (racing b's runner, so the task is made under a kind b does not claim, then renamed), then never renews.
    const row = await store.create({ owner: 'key:alice', kind: 'echo-held', input: { count: 2 } });
    const dead = await store.claim(['echo-held']);
    t.truthy(dead);
    await shared.sequelize.query("UPDATE svc_tasks SET kind = 'echo' WHERE id = :id", { replacements: { id: row.id } });
    t.is((await a.get(row.id, 'key:alice'))?.status, 'in_progress');
    const events = await collect(await a.follow(row.id, 'key:alice', 0));
    t.deepEqual(
      events.map((event) => event.seq),
      [1, 2],
    );
    t.like(await a.get(row.id, 'key:alice'), { status: 'completed', attempts: 2 });
    // The dead runner's late writes change nothing: its lease is gone.
    t.is(await store.append(dead as NonNullable<typeof dead>, 'late', {}), undefined);
    t.false(await store.finish(dead as NonNullable<typeof dead>, { status: 'failed', code: 'late', message: 'late' }));

    // Spent: two dead claims in a row, and the task ends failed, not in_progress.
    const spent = await store.create({ owner: 'key:alice', kind: 'nobody-runs-this', input: {} });
    await store.claim(['nobody-runs-this']);
    await shared.sequelize.query("UPDATE svc_tasks SET attempts = max_attempts, lease_expires_at = now() - interval '1 second' WHERE id = :id", {
      replacements: { id: spent.id },
    });
    await collect(await a.follow(spent.id, 'key:alice', 0));
    t.like(await a.get(spent.id, 'key:alice'), { status: 'failed', error_code: 'task_runner_lost' });
  },
);
