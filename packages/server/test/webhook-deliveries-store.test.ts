import test from 'ava';
import { pino } from 'pino';
import { QueryTypes, type Transaction } from 'sequelize';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { runMigrations } from '../src/db/migrate.ts';
import { KeyWebhooks } from '../src/features/identity/key-webhooks.ts';
import { BACKGROUND_KIND, credentialOfTask } from '../src/features/responses/background.ts';
import { WebhookDeliveries } from '../src/features/responses/webhooks/webhook-deliveries.ts';
import { Scheduler } from '../src/scheduler.ts';
import { createTasksFeature } from '../src/features/tasks/index.ts';
import { TaskStore } from '../src/features/tasks/task-store.ts';

/**
 * Webhook deliveries on a real database, where only time and a failure between two writes can
 * reach: the prune deletes what ended past `SVC_RESPONSES_WEBHOOK_RETENTION_DAYS` and nothing
 * else, and a reaped background response's delivery is written in the transaction that fails its
 * task (a delivery that cannot be written leaves the task to be reaped again, never failed unannounced).
 */
const log = pino({ level: 'silent' });
let testDatabase: TestDatabase;
let database: Database;
let deliveries: WebhookDeliveries;
let store: TaskStore;
const closers: Array<() => Promise<void>> = [];

test.before(async () => {
  testDatabase = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDatabase.databaseUrl, dataDir: testDatabase.dataDir, poolMax: 4, log });
  await runMigrations(database.sequelize, log);
  const config = loadConfig({
    DATABASE_URL: testDatabase.databaseUrl,
    SVC_DATA_DIR: testDatabase.dataDir,
    SVC_TASKS_RUNNERS: '0',
    SVC_RESPONSES_WEBHOOK_URL: 'https://hooks.example.com/svc',
    SVC_RESPONSES_WEBHOOK_SECRET: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=',
    SVC_RESPONSES_WEBHOOK_RETENTION_DAYS: '7',
  });
  const scheduler = new Scheduler(log);
  const feature = createTasksFeature({ config, database, log, scheduler });
  closers.push(feature.close);
  deliveries = new WebhookDeliveries(database.sequelize, feature.tasks, config.responses.webhook, new KeyWebhooks(database.sequelize));
  store = new TaskStore(database.sequelize, config.tasks);
});
test.after.always(async () => {
  for (const close of closers) await close();
  await database?.close();
  await testDatabase?.drop();
});

const count = async (where: string, replacements: Record<string, unknown> = {}) =>
  (
    await database.sequelize.query<{ n: number }>(`SELECT count(*)::int AS n FROM svc_webhook_deliveries WHERE ${where}`, {
      replacements,
      type: QueryTypes.SELECT,
    })
  )[0]!.n;

test.serial('the prune deletes deliveries ended past the retention (7 days here), and keeps pending ones and younger ones', async (t) => {
  const make = async (id: string, status: string, age: string) =>
    database.sequelize.query(
      `INSERT INTO svc_webhook_deliveries (id, owner, event_type, response_id, url, payload, status, created_at)
       VALUES (:id, 'owner-prune', 'response.completed', 'resp_x', 'https://hooks.example.com/svc', '{}', :status, now() - CAST(:age AS interval))`,
      { replacements: { id, status, age } },
    );
  await make('evt_old_delivered', 'delivered', '7 days 1 minute');
  await make('evt_old_failed', 'failed', '8 days');
  await make('evt_old_pending', 'pending', '30 days');
  await make('evt_young_delivered', 'delivered', '6 days 23 hours');
  t.is(await deliveries.prune(), 2);
  const left = await database.sequelize.query<{ id: string }>("SELECT id FROM svc_webhook_deliveries WHERE owner = 'owner-prune' ORDER BY id", {
    type: QueryTypes.SELECT,
  });
  t.deepEqual(
    left.map((row) => row.id),
    ['evt_old_pending', 'evt_young_delivered'],
  );
  t.is(await deliveries.prune(), 0, 'nothing more to delete');
});

test.serial("a reaped background response's delivery is written in the transaction that fails its task, or neither is", async (t) => {
  const claimed = await store.createClaimed({ owner: 'owner-reaped', kind: BACKGROUND_KIND, input: {}, maxAttempts: 1 });
  await database.sequelize.query("UPDATE svc_tasks SET lease_expires_at = now() - interval '1 second' WHERE id = :id", {
    replacements: { id: claimed.row.id },
  });
  const announce = (ended: { id: string; owner: string }[], transaction: Transaction) =>
    Promise.all(ended.map((task) => deliveries.responseEnded(task.owner, task.id, 'failed', undefined, transaction))).then(() => undefined);
  // The delivery cannot be written (its announcement throws after writing): the task's failure is rolled back with it.
  await t.throwsAsync(
    store.reapExpiredLeases(async (ended, transaction) => {
      await announce(ended, transaction);
      throw new Error('the replica died here');
    }),
    { message: 'the replica died here' },
  );
  t.is((await store.get(claimed.row.id, 'owner-reaped'))?.status, 'in_progress', 'not failed unannounced');
  t.is(await count('response_id = :id', { id: claimed.row.id }), 0, 'no delivery of a failure that did not happen');
  // The next backstop reaps it: the failure and its delivery (and the task that sends it) together.
  const { ended } = await store.reapExpiredLeases((ended, transaction) => announce(ended, transaction));
  t.deepEqual(
    ended.map((task) => task.id),
    [claimed.row.id],
  );
  t.like(await store.get(claimed.row.id, 'owner-reaped'), { status: 'failed', error_code: 'task_runner_lost' });
  t.is(await count("response_id = :id AND event_type = 'response.failed' AND status = 'pending'", { id: claimed.row.id }), 1);
  const senders = await database.sequelize.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM svc_tasks WHERE kind = 'responses.webhook' AND input ->> 'delivery_id' IN (SELECT id FROM svc_webhook_deliveries WHERE response_id = :id)",
    { replacements: { id: claimed.row.id }, type: QueryTypes.SELECT },
  );
  t.is(senders[0]!.n, 1, 'the task that sends it is stored with it');
});

test.serial('a reaped background response made with a key that has its own endpoint is announced there too, in the reaping transaction', async (t) => {
  await database.sequelize.query(
    `INSERT INTO svc_developer_keys (id, owner, name, scopes, secret_hash, created_at) VALUES ('dk_reapedkey0000000000000', 'owner-key', 'k', '{}', 'x', now());
     INSERT INTO svc_key_webhooks (credential_id, url, secret) VALUES ('dk_reapedkey0000000000000', 'https://hooks.example.com/key', 'whsec_a2V5LXNlY3JldA==')`,
  );
  // The key is kept in the task's input (as create-response.ts starts it), so the replica that reaps it knows it.
  const claimed = await store.createClaimed({
    owner: 'owner-key',
    kind: BACKGROUND_KIND,
    input: { response: {}, credential_id: 'dk_reapedkey0000000000000' },
    maxAttempts: 1,
  });
  await database.sequelize.query("UPDATE svc_tasks SET lease_expires_at = now() - interval '1 second' WHERE id = :id", {
    replacements: { id: claimed.row.id },
  });
  // As the responses feature's reap listener announces it (features/responses/index.ts).
  await store.reapExpiredLeases((ended, transaction) =>
    Promise.all(ended.map((task) => deliveries.responseEnded(task.owner, task.id, 'failed', credentialOfTask(task), transaction))).then(() => undefined),
  );
  const rows = await database.sequelize.query<{ credential_id: string | null; url: string }>(
    'SELECT credential_id, url FROM svc_webhook_deliveries WHERE response_id = :id ORDER BY credential_id NULLS FIRST',
    { replacements: { id: claimed.row.id }, type: QueryTypes.SELECT },
  );
  t.deepEqual(rows, [
    { credential_id: null, url: 'https://hooks.example.com/svc' },
    { credential_id: 'dk_reapedkey0000000000000', url: 'https://hooks.example.com/key' },
  ]);
});
