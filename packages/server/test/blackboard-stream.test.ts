import test from 'ava';
import type { SseMessage } from '@svc/schemas';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The board's push stream (GET /api/v1/blackboard/watch): new posts of a channel as events whose
 * ids are keyset cursors, resumed with Last-Event-ID; a post stored on another replica wakes the
 * stream through NOTIFY (on PostgreSQL two servers share the database; the embedded database
 * cannot be shared between servers, so there the peer is the same server); streams capped per
 * caller and per server. The backstop poll is set to a minute, so a post seen within the test's
 * deadline was pushed, not polled.
 */
const BACKSTOP = { SVC_BLACKBOARD_WATCH_POLL_MS: '60000' };
let database: TestDatabase;
let svc: TestServer;
let peer: TestServer | undefined;
test.before(async () => {
  database = await createTestDatabase();
  svc = await startTestServer({ database, env: BACKSTOP });
  if (database.kind === 'postgres') peer = await startTestServer({ database, env: BACKSTOP });
});
test.after.always(async () => {
  await peer?.close();
  await svc?.close();
  await database?.drop();
});

type Event = SseMessage<unknown>;

/** Opens a stream and reads it in the background; `next(n)` waits for the n-th event (deadline 10 s). */
function open(server: TestServer, query: { key: string; since?: string; since_id?: string }, lastEventId?: string) {
  const stop = new AbortController();
  const events: Event[] = [];
  const waiters: Array<() => void> = [];
  const reading = (async () => {
    const stream = await server
      .client()
      .blackboard.stream({ query, headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId } }, { signal: stop.signal });
    for await (const event of stream) {
      events.push(event as Event);
      for (const wake of waiters.splice(0)) wake();
    }
  })().catch((error: unknown) => {
    if (!stop.signal.aborted) throw error;
  });
  const next = async (count: number): Promise<Event[]> => {
    const deadline = Date.now() + 10_000;
    while (events.length < count) {
      if (Date.now() > deadline) throw new Error(`waited 10 s for event ${count}; have ${JSON.stringify(events.map((event) => event.event))}`);
      await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), new Promise((resolve) => setTimeout(resolve, 200)), reading]);
    }
    return events.slice(0, count);
  };
  return { events, next, reading, close: () => stop.abort() };
}

const put = (server: TestServer, key: string, text: string) => server.client().blackboard.put({ body: { key, value: { text } } });

test('a stream sends only new posts, oldest first, with cursor ids; Last-Event-ID resumes losing and repeating nothing', async (t) => {
  const key = 'stream:resume';
  const before = await put(svc, key, 'before');
  const first = open(svc, { key });
  const [started] = await first.next(1);
  t.is(started!.event, 'watch-started');
  t.is(started!.id, `${before.created_at}/${before.id}`, 'the stream starts after the newest post');
  const a = await put(peer ?? svc, key, 'a');
  const b = await put(peer ?? svc, key, 'b');
  const seen = await first.next(3);
  first.close();
  t.deepEqual(
    seen.slice(1).map((event) => [event.event, event.id, (event.data as { item: { text: string } }).item.text]),
    [
      ['post-created', `${a.created_at}/${a.id}`, 'a'],
      ['post-created', `${b.created_at}/${b.id}`, 'b'],
    ],
  );
  // Made while nobody listened: a resume from a's id gets b and c, once each.
  const c = await put(svc, key, 'c');
  const resumed = open(svc, { key }, seen[1]!.id);
  const again = await resumed.next(3);
  t.deepEqual(
    again.map((event) => event.id),
    [seen[1]!.id, `${b.created_at}/${b.id}`, `${c.created_at}/${c.id}`],
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is(resumed.events.length, 3, 'nothing repeated');
  resumed.close();
  // The query's since/since_id start a first connect the same way.
  const fromQuery = open(svc, { key, since: b.created_at, since_id: b.id });
  t.deepEqual(
    (await fromQuery.next(2)).map((event) => event.id),
    [`${b.created_at}/${b.id}`, `${c.created_at}/${c.id}`],
  );
  fromQuery.close();
});

test('a stream of another channel is not sent the post; a malformed Last-Event-ID is a 422', async (t) => {
  const quiet = open(svc, { key: 'stream:quiet' });
  await quiet.next(1);
  const busy = open(svc, { key: 'stream:busy' });
  await busy.next(1);
  await put(svc, 'stream:busy', 'x');
  await busy.next(2);
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.is(quiet.events.length, 1);
  quiet.close();
  busy.close();
  const error = await t.throwsAsync(svc.client().blackboard.stream({ query: { key: 'k' }, headers: { 'last-event-id': 'not-a-cursor' } }));
  t.is((error as { status?: number }).status, 422);
});

async function refusal(server: TestServer, key: string) {
  const error = await server
    .client()
    .blackboard.stream({ query: { key } })
    .then(
      () => undefined,
      (caught: unknown) => caught as { status?: number; code?: string; headers?: Headers },
    );
  return { status: error?.status, code: error?.code, retryAfter: error?.headers?.get('retry-after') };
}

test('streams per caller: the limit passes, one past is 429 with Retry-After, a closed one frees its slot', async (t) => {
  const server = await startTestServer({ env: { SVC_BLACKBOARD_WATCH_PER_CALLER: '2', SVC_BLACKBOARD_WATCH_MAX_STREAMS: '10' } });
  try {
    const one = open(server, { key: 'cap:1' });
    const two = open(server, { key: 'cap:2' });
    await one.next(1);
    await two.next(1);
    t.deepEqual(await refusal(server, 'cap:3'), { status: 429, code: 'blackboard_watch_caller_limit', retryAfter: '5' });
    one.close();
    await one.reading;
    // The slot comes back when the server sees the connection close.
    let third: ReturnType<typeof open> | undefined;
    for (let attempt = 0; attempt < 50 && !third; attempt++) {
      if ((await refusal(server, 'probe')).status === 429) await new Promise((resolve) => setTimeout(resolve, 50));
      else third = open(server, { key: 'cap:3' });
    }
    t.truthy(third);
    two.close();
    third?.close();
  } finally {
    await server.close();
  }
});

test('streams per server: the limit passes, one past is 503 with Retry-After', async (t) => {
  const server = await startTestServer({ env: { SVC_BLACKBOARD_WATCH_PER_CALLER: '10', SVC_BLACKBOARD_WATCH_MAX_STREAMS: '2' } });
  try {
    const one = open(server, { key: 'full:1' });
    const two = open(server, { key: 'full:2' });
    await one.next(1);
    await two.next(1);
    t.deepEqual(await refusal(server, 'full:3'), { status: 503, code: 'blackboard_watch_server_full', retryAfter: '5' });
    one.close();
    two.close();
  } finally {
    await server.close();
  }
});

test("the client's watch rides out a 503 (server full) after its Retry-After, then yields the post made meanwhile once", async (t) => {
  const server = await startTestServer({ env: { SVC_BLACKBOARD_WATCH_PER_CALLER: '10', SVC_BLACKBOARD_WATCH_MAX_STREAMS: '1' } });
  try {
    const key = 'client:full';
    const zero = await put(server, key, 'zero');
    const holder = open(server, { key: 'client:holder' });
    await holder.next(1);
    const stop = new AbortController();
    const waits: Array<[string | undefined, number]> = [];
    const seen: string[] = [];
    const watching = (async () => {
      for await (const post of server.client().blackboard.watch({
        key,
        since: { since: zero.created_at, since_id: zero.id },
        signal: stop.signal,
        onReconnect: (error, waitMs) => {
          waits.push([(error as { code?: string }).code, waitMs]);
          // The post is made while the watch is refused; the slot frees before its retry.
          if (waits.length === 1) void put(server, key, 'meanwhile').then(() => holder.close());
        },
      })) {
        seen.push(post.item.text);
        stop.abort();
      }
    })();
    const deadline = setTimeout(() => stop.abort(), 30_000);
    await watching;
    clearTimeout(deadline);
    t.deepEqual(seen, ['meanwhile']);
    t.deepEqual(waits[0], ['blackboard_watch_server_full', 5_000], 'the wait is the server’s Retry-After');
  } finally {
    await server.close();
  }
});
