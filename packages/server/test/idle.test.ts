import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { startTestServer } from '@svc/testing/test-server';

/**
 * An idle server does almost no database work: its workers wake on LISTEN/NOTIFY (`db/wake.ts`)
 * and housekeeping runs every half minute or slower, so the statements it sends over a quiet
 * window are counted (a count, never a time: other test files share the cores). The bound is
 * under one a second; the job queue's old 250 ms poll alone sent 120 in 10 s.
 */
const WINDOW_MS = 10_000;
/** Statements allowed in WINDOW_MS: the job queue's backstop (3), the hold sweep (1), the prunes and sweeps that may fall in it. */
const MAX_STATEMENTS = 9;

test('an idle server sends at most 9 statements to its database in 10 s', async (t) => {
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
  t.true(seen.length <= MAX_STATEMENTS, `${seen.length} statements in ${WINDOW_MS} ms of idling (at most ${MAX_STATEMENTS}):\n${seen.join('\n')}`);
  t.log(`${seen.length} statements in ${WINDOW_MS} ms`);
});
