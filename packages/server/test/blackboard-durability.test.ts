import test from 'ava';
import { QueryTypes } from 'sequelize';
import { WalFlusher } from '../src/db/wal-flush.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * On PostgreSQL a batch of puts made while others are under way commits asynchronously (so it
 * releases the shared counter locks without waiting for its fsync) and is answered only after a
 * synchronous write on the backend's own `svc_wal_flush` row has flushed the WAL past it; a put
 * alone commits synchronously. The embedded database runs with fsync off and commits puts
 * synchronously, writing no such row.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: '2' } });
});
test.after.always(async () => {
  await svc?.close();
});

async function flushesSoFar(): Promise<number> {
  const [row] = await svc.server.database.sequelize.query<{ n: number }>('SELECT coalesce(sum(flushes), 0)::int AS n FROM svc_wal_flush', {
    type: QueryTypes.SELECT,
  });
  return row!.n;
}

test.serial('a put alone commits synchronously: no flush of its own', async (t) => {
  const before = await flushesSoFar();
  const answer = await svc.client().blackboard.put({ body: { key: 'durable:one', value: { text: 'kept' } } });
  t.truthy(answer.edit_token);
  t.is(await flushesSoFar(), before);
  // The answer came after the put committed: any session reads it.
  const [stored] = await svc.server.database.sequelize.query<{ n: number }>('SELECT count(*)::int AS n FROM blackboard_items WHERE id = $1', {
    bind: [answer.id],
    type: QueryTypes.SELECT,
  });
  t.is(stored!.n, 1);
});

test.serial('concurrent puts on PostgreSQL commit asynchronously and are answered after shared WAL flushes', async (t) => {
  const client = svc.client();
  const before = await flushesSoFar();
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, index) => client.blackboard.put({ body: { key: `durable:many:${index}`, value: { text: `kept ${index}` } } })),
  );
  const flushes = (await flushesSoFar()) - before;
  if (svc.database.kind === 'postgres') {
    // The first put found none under way; those that overlapped it flushed, sharing flushes.
    t.true(flushes >= 1 && flushes < answers.length, `flushes: ${flushes}`);
  } else {
    t.is(flushes, 0);
  }
  const [stored] = await svc.server.database.sequelize.query<{ n: number }>('SELECT count(*)::int AS n FROM blackboard_items WHERE id IN (:ids)', {
    replacements: { ids: answers.map((answer) => answer.id) },
    type: QueryTypes.SELECT,
  });
  t.is(stored!.n, answers.length);
});

test.serial('a put refused by admission rolls back and waits for no flush', async (t) => {
  const client = svc.client();
  for (const text of ['one', 'two']) await client.blackboard.put({ body: { key: 'durable:full', value: { text } } });
  const before = await flushesSoFar();
  const response = await fetch(`${svc.apiUrl}/api/v1/blackboard/put`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key: 'durable:full', value: { text: 'three' } }),
  });
  t.is(response.status, 429);
  t.is(((await response.json()) as { code: string }).code, 'blackboard_admission:channel_posts');
  t.is(await flushesSoFar(), before);
  const page = await client.blackboard.get({ query: { key: 'durable:full' } });
  t.deepEqual(page.items.map((item) => item.item.text).sort(), ['one', 'two']);
});

test.serial('concurrent callers share flushes: those asking while one runs share the next, later callers get a new one', async (t) => {
  const flusher = new WalFlusher(svc.server.database.sequelize);
  const before = await flushesSoFar();
  // The first starts a flush at once; the other nine ask while it runs (it may have begun
  // before their commits), so they all wait for one more flush started after it.
  await Promise.all(Array.from({ length: 10 }, () => flusher.flush()));
  t.is(await flushesSoFar(), before + 2);
  await flusher.flush();
  t.is(await flushesSoFar(), before + 3);
});

test.serial('a failed flush fails its callers, and the next caller starts afresh', async (t) => {
  const flusher = new WalFlusher(svc.server.database.sequelize);
  await svc.server.database.sequelize.query('ALTER TABLE svc_wal_flush RENAME TO svc_wal_flush_away');
  try {
    const results = await Promise.allSettled([flusher.flush(), flusher.flush()]);
    t.deepEqual(
      results.map((result) => result.status),
      ['rejected', 'rejected'],
    );
  } finally {
    await svc.server.database.sequelize.query('ALTER TABLE svc_wal_flush_away RENAME TO svc_wal_flush');
  }
  const before = await flushesSoFar();
  await flusher.flush();
  t.is(await flushesSoFar(), before + 1);
});
