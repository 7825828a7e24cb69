import test from 'ava';
import { QueryTypes } from 'sequelize';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpContract } from '@svc/schemas';
import { slowPdf } from '@svc/testing/pdf-fixtures';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { waitUntil } from '@svc/testing/wait-until';
import { pino } from 'pino';
import { openDatabase } from '../src/db/database.ts';

/**
 * The kill -9 proof for MCP tasks: a replica (a `svc-server` process) takes 20 pdf_extract tasks
 * and is killed with SIGKILL while it runs them. A second replica (on PostgreSQL, one already
 * running; on the embedded database, the next process on the same data directory, which belongs
 * to one process at a time) answers every task, and each ends `completed`, or `failed` with its
 * reason, within the bound docs/agents.md states: the lease (3 s here) plus the backstop plus the
 * time to run what is left; 120 s here, as the machine may be loaded. None is run to a result
 * twice: a task's end is written once, fenced by its lease (attempts count the runs a dead replica
 * started, read from the store once the survivor stopped). pdf_extract is not a credit call, so
 * nothing is charged.
 */
const OPERATOR_TOKEN = 'mcp-tasks-kill-operator-token-0123456789';
const TASKS = 20;
/** Lease 3 s and backstop 0.5 s, then 20 tasks of a fraction of a second each on the survivor's 2 runners, with room for a loaded machine. */
const SETTLED_WITHIN_MS = 120_000;
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
let database: TestDatabase | undefined;

test.after.always(async () => {
  killAllServerProcesses();
  await database?.drop().catch(() => {});
});

async function connect(replica: ServerProcess) {
  const client = new ClientV1({ name: 'svc-tasks-kill', version: '1.0.0' });
  const url = new URL(mcpContract.endpoint.path, replica.baseUrl);
  await client.connect(new TransportV1(url, { requestInit: { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } } }));
  return client;
}

test.serial('a replica killed with SIGKILL while it runs 20 tasks: another replica ends each completed or failed with a reason', async (t) => {
  database = await createTestDatabase();
  const env = {
    SVC_OPERATOR_TOKEN: OPERATOR_TOKEN,
    SVC_TASKS_LEASE_SECONDS: '3',
    SVC_TASKS_BACKSTOP_MS: '500',
    // Two at a time on each replica, as the job queue's 2 workers ran them.
    SVC_TASKS_RUNNERS: '2',
    SVC_MCP_TASKS_MAX_ACTIVE: String(TASKS),
    SVC_PDF_RATE_LIMIT: '0',
    SVC_PDF_MAX_PENDING: '8',
    SVC_PDF_QUEUE_TIMEOUT_MS: '60000',
  };
  const first = await startServerProcess(database, env);
  const client = await connect(first);
  const args = { data_base64: slowPdf(40, 7_000, { shortText: true }).toString('base64'), max_pages: 40 };
  const taskIds: string[] = [];
  for (let index = 0; index < TASKS; index++) {
    const stream = client.experimental.tasks.callToolStream({ name: 'pdf_extract', arguments: args }, CallToolResultSchema, { task: {} });
    const created = (await stream.next()).value as { type: string; task?: { taskId: string } };
    await stream.return(undefined);
    t.is(created.type, 'taskCreated', JSON.stringify(created));
    taskIds.push(created.task!.taskId);
  }
  // Started once every task is queued: a replica running already could claim them before the first.
  const second = onPostgres ? startServerProcess(database, { ...env, SVC_TASKS_BACKSTOP_MS: '3000' }) : undefined;
  await waitUntil(
    () => 'a task to be running on the first replica',
    async () => {
      const statuses = await Promise.all(taskIds.slice(0, 4).map((taskId) => client.experimental.tasks.getTask(taskId)));
      return statuses.some((task) => task.statusMessage?.startsWith('running'));
    },
    { timeoutMs: 60_000, intervalMs: 50 },
  );
  await client.close().catch(() => {});
  await first.kill();
  const killedAt = performance.now();

  const survivor = (await second) ?? (await startServerProcess(database, env));
  const survivorUpAt = performance.now();
  const other = await connect(survivor);
  try {
    const ended = await waitUntil(
      () => 'every task to end on the survivor',
      async () => {
        const tasks = await Promise.all(taskIds.map((taskId) => other.experimental.tasks.getTask(taskId)));
        return tasks.every((task) => task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled') && tasks;
      },
      { timeoutMs: SETTLED_WITHIN_MS, intervalMs: 250 },
    );
    const now = performance.now();
    t.log(
      `${TASKS} tasks ended ${Math.round(now - killedAt)} ms after the kill, ${Math.round(now - survivorUpAt)} ms after the survivor answered: ${ended.map((task) => (task.status === 'failed' ? task.statusMessage : task.status)).join(',')}`,
    );
    for (const task of ended) {
      t.true(task.status === 'completed' || task.status === 'failed', `${task.taskId} ${task.status}`);
      if (task.status === 'failed') t.regex(task.statusMessage ?? '', /^failed: \S+/, `${task.taskId} fails with a reason`);
      const result = await other.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
      if (task.status === 'completed') {
        t.falsy(result.isError, task.taskId);
        t.true(((result.structuredContent as { pages?: unknown[] }).pages?.length ?? 0) > 0, task.taskId);
      } else t.true(result.isError, task.taskId);
    }
    t.true(
      ended.some((task) => task.status === 'completed'),
      'the survivor ran what the dead replica left',
    );
  } finally {
    await other.close().catch(() => {});
    await survivor.stop();
  }
  // Runs started: one per task, plus at most one more for each task the dead replica's 2 runners held.
  const store = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolMax: 1, log: pino({ level: 'silent' }) });
  try {
    const rows = await store.sequelize.query<{ attempts: number }>('SELECT attempts FROM svc_tasks WHERE id IN (:ids)', {
      replacements: { ids: taskIds },
      type: QueryTypes.SELECT,
    });
    const runs = rows.reduce((sum, row) => sum + row.attempts, 0);
    t.log(`${runs} runs started for ${TASKS} tasks`);
    t.is(rows.length, TASKS);
    t.true(runs >= TASKS && runs <= TASKS + 2, `runs ${rows.map((row) => row.attempts).join(',')}`);
  } finally {
    await store.close();
  }
});
