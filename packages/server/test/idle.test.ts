import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { startTestServer } from '@svc/testing/test-server';

/**
 * An idle server does almost no database work: its workers wake on LISTEN/NOTIFY (`db/wake.ts`),
 * the job queue's and the task store's backstops look with one read each every 10 s on PostgreSQL
 * and every 60 s on the embedded database (`db/backstop.ts`), and housekeeping runs every 20 s or
 * slower. So the statements sent over a quiet window after the start are counted (a count, never
 * a time: other test files share the cores). The window is the first 10 s after the start: on
 * PostgreSQL both backstops come once in it, on the embedded database none (the first comes one
 * lease, 30 s, after the start), so a shorter backstop period fails here. The job queue's old
 * 250 ms poll alone sent 120 statements in 10 s; the 10 s backstops of both queues 4.
 */
const WINDOW_MS = 10_000;
const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
/** The backstops' reads (job-queue.ts's hasWork, task-store.ts's backstopFinds) and their writes. */
const BACKSTOP = /svc_jobs|svc_tasks/;
/** Backstop statements allowed in WINDOW_MS: one read per queue on PostgreSQL (a turn each), none on the embedded database. */
const MAX_BACKSTOP_STATEMENTS = onPostgres ? 2 : 0;
/** Any statement: the backstops', and a housekeeping turn that may fall in the window (they come every 20 s or slower). */
const MAX_STATEMENTS = MAX_BACKSTOP_STATEMENTS + 2;

test(`an idle server sends at most ${MAX_STATEMENTS} statements to its database in 10 s, ${MAX_BACKSTOP_STATEMENTS} of them its backstops'`, async (t) => {
  const svc = await startTestServer();
  t.teardown(() => svc.close());
  const { sequelize } = svc.server.database;
  // Startup work (the first claim, caches warming) is over before the window opens.
  await sleep(1_000);
  const sent: string[] = [];
  const query = sequelize.query.bind(sequelize) as (...args: unknown[]) => Promise<unknown>;
  (sequelize as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
    const sql = args[0];
    sent.push(
      String(typeof sql === 'string' ? sql : (sql as { query?: string }).query)
        .replace(/\s+/g, ' ')
        .slice(0, 80),
    );
    return query(...args);
  };
  await sleep(WINDOW_MS);
  const seen = [...sent];
  const backstop = seen.filter((sql) => BACKSTOP.test(sql));
  const listed = `${seen.length} statements in ${WINDOW_MS} ms of idling:\n${seen.join('\n')}`;
  t.true(backstop.length <= MAX_BACKSTOP_STATEMENTS, `${backstop.length} backstop statements (at most ${MAX_BACKSTOP_STATEMENTS}); ${listed}`);
  t.true(seen.length <= MAX_STATEMENTS, `at most ${MAX_STATEMENTS}; ${listed}`);
  t.log(listed);
});
