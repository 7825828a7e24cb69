import test from 'ava';
import { pino } from 'pino';
import { QueryTypes } from 'sequelize';
import { a2aLimits } from '@svc/schemas';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { openDatabase, type Database } from '../src/db/database.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { A2aTaskStore } from '../src/features/discovery/a2a-task-store.ts';
import type { NeutralTask } from '../src/features/discovery/a2a-wire.ts';

/**
 * The A2A task store on a real database, where only time can reach: retention (a task read at
 * 24 h less a minute, not at 24 h and a second; the prune deletes only the expired), a task whose
 * replica stopped (working past its deadline reads failed), a result too large to keep, and the
 * running-task cap taken by many starts at once.
 */
const log = pino({ level: 'silent' });
let testDatabase: TestDatabase;
let database: Database;
let store: A2aTaskStore;

test.before(async () => {
  testDatabase = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDatabase.databaseUrl, dataDir: testDatabase.dataDir, poolMax: 2, log });
  await runMigrations(database.sequelize, log);
  store = new A2aTaskStore(database.sequelize);
});
test.after.always(async () => {
  await database?.close();
  await testDatabase?.drop();
});

/** The tests of this file that are not about the running cap share one owner: no cap between them. */
const UNCAPPED = 1000;

let counter = 0;
const working = (): NeutralTask => ({
  id: `a2a-store-${++counter}`,
  contextId: 'ctx',
  skill: 'summarize',
  state: 'working',
  timestamp: new Date().toISOString(),
  artifacts: [],
  history: [{ messageId: 'm', role: 'user', parts: [{ text: 'hello' }] }],
});

const age = (id: string, interval: string) =>
  database.sequelize.query(`UPDATE a2a_tasks SET created_at = clock_timestamp() - interval '${interval}' WHERE id = :id`, { replacements: { id } });

test(`a task is read for ${a2aLimits.retentionHours} h; the prune deletes only the expired`, async (t) => {
  const [young, old] = [working(), working()];
  await store.create('owner-a', young, UNCAPPED);
  await store.create('owner-a', old, UNCAPPED);
  await age(young.id, `${a2aLimits.retentionHours} hours - 1 minute`);
  await age(old.id, `${a2aLimits.retentionHours} hours 1 second`);
  t.is((await store.get('owner-a', young.id))?.id, young.id);
  t.is(await store.get('owner-a', old.id), undefined, 'past its retention: not found at once');
  await store.prune();
  const rows = await database.sequelize.query<{ id: string }>('SELECT id FROM a2a_tasks WHERE id IN (:ids)', {
    replacements: { ids: [young.id, old.id] },
    type: QueryTypes.SELECT,
  });
  t.deepEqual(
    rows.map((row) => row.id),
    [young.id],
  );
  t.is(await store.get('owner-b', young.id), undefined, "another owner's task is not found");
});

test('a task still working past its deadline (its replica stopped) reads failed, and cannot be canceled', async (t) => {
  const task = working();
  await store.create('owner-a', task, UNCAPPED);
  await database.sequelize.query("UPDATE a2a_tasks SET deadline_at = clock_timestamp() - interval '1 second' WHERE id = :id", {
    replacements: { id: task.id },
  });
  const read = await store.get('owner-a', task.id);
  t.is(read?.state, 'failed');
  t.regex(JSON.stringify(read?.statusMessage), /did not finish within its deadline/);
  t.is((await store.cancel('owner-a', task.id, { messageId: 'c', role: 'agent', parts: [{ text: 'cancel' }] }))?.state, 'failed');
});

test(`a result up to ${a2aLimits.maxStoredResultBytes} bytes is kept; a larger one keeps a note`, async (t) => {
  const artifact = (text: string) => [{ artifactId: 'r', name: 'summarize', parts: [{ text }] }];
  // The artifact list's JSON around the text: [{"artifactId":"r","name":"summarize","parts":[{"text":"..."}]}]
  const overhead = Buffer.byteLength(JSON.stringify(artifact('')));
  const [kept, noted] = [working(), working()];
  await store.create('owner-a', kept, UNCAPPED);
  await store.create('owner-a', noted, UNCAPPED);
  t.true(await store.finish('owner-a', kept.id, 'completed', undefined, artifact('a'.repeat(a2aLimits.maxStoredResultBytes - overhead))));
  t.true(await store.finish('owner-a', noted.id, 'completed', undefined, artifact('a'.repeat(a2aLimits.maxStoredResultBytes - overhead + 1))));
  const keptText = (await store.get('owner-a', kept.id))!.artifacts[0]!.parts[0] as { text: string };
  t.is(keptText.text.length, a2aLimits.maxStoredResultBytes - overhead);
  const note = (await store.get('owner-a', noted.id))!.artifacts[0]!.parts[0] as { text: string };
  t.is(
    note.text,
    `The answer was ${a2aLimits.maxStoredResultBytes + 1} bytes, over the ${a2aLimits.maxStoredResultBytes} a stored task keeps; it was sent whole when the task ran.`,
  );
  t.false(await store.finish('owner-a', kept.id, 'failed', undefined, []), 'a finished task is not finished again');
});

test(`${3 * a2aLimits.maxRunningPerPrincipal} starts at once store exactly ${a2aLimits.maxRunningPerPrincipal} running tasks; an ended or overdue one frees its place`, async (t) => {
  const cap = a2aLimits.maxRunningPerPrincipal;
  const tasks = Array.from({ length: 3 * cap }, () => working());
  const stored = await Promise.all(tasks.map((task) => store.create('owner-capped', task, cap)));
  t.is(stored.filter(Boolean).length, cap);
  const running = tasks.filter((_, index) => stored[index]);
  t.false(await store.create('owner-capped', working(), cap), 'at the cap');
  t.true(await store.create('owner-other', working(), cap), "another owner's tasks do not count");
  t.true(await store.finish('owner-capped', running[0]!.id, 'completed', undefined, []));
  t.true(await store.create('owner-capped', working(), cap), 'an ended task frees its place');
  await database.sequelize.query("UPDATE a2a_tasks SET deadline_at = clock_timestamp() - interval '1 second' WHERE id = :id", {
    replacements: { id: running[1]!.id },
  });
  t.true(await store.create('owner-capped', working(), cap), 'a task past its deadline (its replica stopped) frees its place');
  t.false(await store.create('owner-capped', working(), cap));
});
