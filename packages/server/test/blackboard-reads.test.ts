import test from 'ava';
import { QueryTypes } from 'sequelize';
import type { SvcClient } from '@svc/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
let client: SvcClient;
test.before(async () => {
  // Admission is not under test here; lift it so a few hundred puts fit one channel.
  svc = await startTestServer({
    env: {
      SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: '100000',
      SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR: '100000',
      SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR: '100000',
      SVC_BLACKBOARD_IP_PUTS_PER_HOUR: '100000',
    },
  });
  client = svc.client();
});
test.after.always(async () => {
  await svc?.close();
});

const put = (key: string, value: Record<string, unknown>) => client.blackboard.put({ body: { key, value: { text: 'x', ...value } } });

async function raw(path: string, init?: RequestInit) {
  const response = await fetch(`${svc.apiUrl}/api/v1/blackboard${path}`, init);
  return { status: response.status, body: await response.json() };
}

test('cursor walks: history backwards and polling forwards, nothing missed or repeated while posts arrive', async (t) => {
  const key = 'walk:main';
  const before: string[] = [];
  for (let batch = 0; batch < 30; batch++) {
    const created = await Promise.all(Array.from({ length: 8 }, (_, index) => put(key, { text: `old ${batch}.${index}`, topics: ['walk'] })));
    before.push(...created.map((item) => item.id));
  }
  const arrived: string[] = [];
  const first = await client.blackboard.get({ query: { key, limit: 37 } });
  t.is(first.items.length, 37);
  t.true(first.has_more);
  const pollStart = first.poll_next!;
  t.is(pollStart.since_id, first.items[0]!.id);
  const seen = first.items.map((item) => item.id);
  const order = first.items.map((item) => [item.created_at, item.id] as const);
  let cursor = first.history_next;
  while (cursor) {
    // New posts arrive while the history is read; they must not leak into history pages.
    arrived.push((await put(key, { text: `new ${arrived.length}`, topics: ['walk'] })).id);
    const page = await client.blackboard.get({ query: { key, limit: 37, ...cursor } });
    t.is(page.poll_next, null);
    seen.push(...page.items.map((item) => item.id));
    order.push(...page.items.map((item) => [item.created_at, item.id] as const));
    cursor = page.history_next;
    if (page.has_more) t.truthy(page.next_call.history);
  }
  t.is(seen.length, before.length);
  t.deepEqual([...seen].sort(), [...before].sort());
  for (let index = 1; index < order.length; index++) {
    const [previous, current] = [order[index - 1]!, order[index]!];
    t.true(previous[0] > current[0] || (previous[0] === current[0] && previous[1] > current[1]), 'history is newest first, (created_at, id) descending');
  }

  // Forward from the first page's anchor: exactly the posts that arrived, oldest first.
  const polled: string[] = [];
  let poll: { since: string; since_id?: string } = { since: pollStart.since, since_id: pollStart.since_id! };
  for (let round = 0; round < 20; round++) {
    const page = await client.blackboard.query({ query: { key, topic: 'walk', limit: 3, ...poll } });
    polled.push(...page.items.map((item) => item.id));
    if (round === 1) arrived.push((await put(key, { text: 'late', topics: ['walk'] })).id);
    t.is(page.history_next, null);
    const next = page.poll_next!;
    poll = { since: next.since, ...(next.since_id ? { since_id: next.since_id } : {}) };
    t.deepEqual(page.next_call.poll?.arguments, { key, topic: 'walk', limit: 3, ...poll });
    if (page.items.length === 0) break;
  }
  t.deepEqual(polled, arrived);
});

test('an empty board still answers a poll anchor, and polling from it finds the first post', async (t) => {
  const page = await client.blackboard.get({ query: { key: 'walk:empty' } });
  t.deepEqual(page.items, []);
  t.false(page.has_more);
  t.is(page.history_next, null);
  t.truthy(page.poll_next?.since);
  t.is(page.poll_next?.since_id, null);
  const created = await put('walk:empty', { text: 'first' });
  const next = await client.blackboard.get({ query: { key: 'walk:empty', since: page.poll_next!.since } });
  t.deepEqual(
    next.items.map((item) => item.id),
    [created.id],
  );
});

test('cursor rules: each *_id needs its timestamp, since excludes before, limit is 1..200', async (t) => {
  const at = new Date().toISOString();
  const id = 'bb_000000000000000000000000';
  const cases: Array<[string, string]> = [
    [`?key=k&since=${at}&before=${at}`, 'blackboard_cursor_conflict:since_before'],
    [`?key=k&since_id=${id}`, 'blackboard_cursor_conflict:since_id_without_since'],
    [`?key=k&before_id=${id}`, 'blackboard_cursor_conflict:before_id_without_before'],
  ];
  for (const [query, code] of cases) {
    const answer = await raw(`/get${query}`);
    t.is(answer.status, 400, query);
    t.is(answer.body.code, code);
  }
  t.is((await raw('/get?key=k&limit=200')).status, 200);
  t.is((await raw('/get?key=k&limit=201')).status, 422);
  t.is((await raw('/get?key=k&limit=0')).status, 422);
  t.is((await raw('/get')).status, 422, 'get needs a key');
  t.is((await raw('/get?key=k&since=yesterday')).status, 422);
  // The edges of what PostgreSQL reads: year 0001 and ±15:59 pass, year 0000 and ±16:00 do not.
  t.is((await raw('/get?key=k&since=0001-01-01T00:00:00Z')).status, 200);
  t.is((await raw('/get?key=k&since=0000-02-29T22:10:12.290Z')).status, 422);
  t.is((await raw(`/get?key=k&before=${encodeURIComponent('9999-12-31T23:59:59-15:59')}`)).status, 200);
  t.is((await raw(`/get?key=k&before=${encodeURIComponent('9999-12-31T23:59:59-16:00')}`)).status, 422);
  t.is((await raw(`/query?q=${'q'.repeat(200)}`)).status, 200);
  t.is((await raw(`/query?q=${'q'.repeat(201)}`)).status, 422);
  t.is((await raw('/query?nonsense=1')).status, 422);
  const posted = await raw('/get', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key: 'k', since: at, before: at }),
  });
  t.is(posted.body.code, 'blackboard_cursor_conflict:since_before');
  const defaults = await client.blackboard.query();
  t.is(defaults.next_call.poll?.arguments.limit, 50);
});

test('filters: task (aliases), kind, topic and q; GET and POST agree', async (t) => {
  const a = await put('filter:one', { text: 'Needle in 100% haystack', task: 'guard', kind: 'ask', topics: ['seek'] });
  await put('filter:one', { text: 'plain', task: 'toxicity', kind: 'note' });
  const byTask = await client.blackboard.query({ query: { task: 'injection', key: 'filter:one' } });
  t.deepEqual(
    byTask.items.map((item) => item.id),
    [a.id],
  );
  t.is(byTask.next_call.poll?.arguments.task, 'prompt_injection');
  const byAll = await client.blackboard.queryPost({ body: { key: 'filter:one', kind: 'ask', topic: 'seek', q: '100%' } });
  t.deepEqual(
    byAll.items.map((item) => item.id),
    [a.id],
  );
  const percent = await client.blackboard.query({ query: { key: 'filter:one', q: '0% h' } });
  t.is(percent.items.length, 1, 'q is a literal substring, % is not a wildcard');
  const nothing = await client.blackboard.query({ query: { key: 'filter:one', q: '%%' } });
  t.is(nothing.items.length, 0);
});

test('threads: parent_id gives direct replies, thread_id the root and descendants to depth 32, safe against cycles', async (t) => {
  const root = await put('thread:a', { text: 'root' });
  const chain = [root.id];
  for (let depth = 1; depth <= 34; depth++)
    chain.push((await client.blackboard.put({ body: { key: 'thread:a', value: { text: `reply ${depth}` }, parent_id: chain[depth - 1] } })).id);
  const sibling = await client.blackboard.put({ body: { key: 'thread:b', value: { text: 'reply elsewhere', parent_id: root.id } } });
  const direct = await client.blackboard.query({ query: { parent_id: root.id } });
  t.deepEqual(direct.items.map((item) => item.id).sort(), [chain[1]!, sibling.id].sort());
  const thread = await client.blackboard.query({ query: { thread_id: root.id, limit: 200 } });
  t.is(thread.items.length, 1 + 32 + 1, 'root, 32 levels of the chain, and the sibling reply');
  t.false(thread.items.some((item) => item.id === chain[33] || item.id === chain[34]));
  // Make a cycle: the root now claims its own grandchild as parent. Reading must still end.
  await svc.server.database.sequelize.query('UPDATE blackboard_items SET parent_id = $1 WHERE id = $2', { bind: [chain[2], root.id] });
  const cyclic = await client.blackboard.query({ query: { thread_id: root.id, limit: 200 } });
  t.is(cyclic.items.length, 34);
  const both = await raw(`/query?parent_id=${root.id}&thread_id=${root.id}`);
  t.is(both.status, 400);
  t.is(both.body.code, 'blackboard_filter_conflict:parent_id_thread_id');
});

test('artifact filters: revision needs artifact_id or solution_scope; solution_scope is JSON on GET; eligible compares runtimes', async (t) => {
  const revision = 'a'.repeat(40);
  const matching = await put('solve:x', {
    text: 'works on torch 2.4',
    artifact_id: 'org/model',
    revision,
    runtime_versions: [{ name: 'torch', version: '2.4' }],
  });
  const other = await put('solve:y', {
    text: 'works on torch 2.1',
    solution_scope: { artifact_id: 'org/model', revision, runtime_versions: [{ name: 'torch', version: '2.1' }] },
  });
  await put('solve:z', { text: 'other revision', artifact_id: 'org/model', revision: 'b'.repeat(40) });
  const lonely = await raw(`/query?revision=${revision}`);
  t.is(lonely.status, 400);
  t.is(lonely.body.code, 'blackboard_filter_conflict:revision_requires_artifact');
  t.is((await raw('/query?revision=xyz&artifact_id=a')).status, 422);
  const byArtifact = await client.blackboard.query({ query: { artifact_id: 'org/model' } });
  t.is(byArtifact.items.length, 3);
  t.is(byArtifact.items[0]!.eligible, undefined);
  const scope = { artifact_id: 'org/model', revision: revision.toUpperCase(), runtime_versions: [{ name: 'torch', version: '2.4' }] };
  const viaGet = await raw(`/query?solution_scope=${encodeURIComponent(JSON.stringify(scope))}`);
  t.is(viaGet.status, 200, JSON.stringify(viaGet.body));
  const eligible = Object.fromEntries(viaGet.body.items.map((item: { id: string; eligible: boolean }) => [item.id, item.eligible]));
  t.deepEqual(eligible, { [matching.id]: true, [other.id]: false });
  const viaPost = await client.blackboard.queryPost({ body: { solution_scope: scope } });
  t.deepEqual(
    viaPost.items.map((item) => item.id),
    viaGet.body.items.map((item: { id: string }) => item.id),
  );
  t.is((await raw('/query?solution_scope=not-json')).status, 422);
  t.is((await raw(`/query?solution_scope=${encodeURIComponent(JSON.stringify({ artifact_id: 'a', runtime_versions: [] }))}`)).status, 422);
  const runtimes = (count: number) => Array.from({ length: count }, (_, index) => ({ name: `lib${index}`, version: '1' }));
  t.is((await raw(`/query?solution_scope=${encodeURIComponent(JSON.stringify({ artifact_id: 'a', runtime_versions: runtimes(16) }))}`)).status, 200);
  t.is((await raw(`/query?solution_scope=${encodeURIComponent(JSON.stringify({ artifact_id: 'a', runtime_versions: runtimes(17) }))}`)).status, 422);
  t.is((await raw(`/query?artifact_id=${'a'.repeat(200)}`)).status, 200);
  t.is((await raw(`/query?artifact_id=${'a'.repeat(201)}`)).status, 422);
  const withRevision = await client.blackboard.query({ query: { artifact_id: 'org/model', revision: `sha256:${'c'.repeat(64)}` } });
  t.is(withRevision.items.length, 0);
});

test('expired and tombstoned items never appear in reads, item reads or channel summaries', async (t) => {
  const kept = await put('state:a', { text: 'live' });
  const expired = await put('state:a', { text: 'expired', expires_in: 60 });
  const gone = await put('state:gone', { text: 'only post' });
  await svc.server.database.sequelize.query("UPDATE blackboard_items SET expires_at = now() - interval '1 second' WHERE id IN ($1, $2)", {
    bind: [expired.id, gone.id],
  });
  const page = await client.blackboard.get({ query: { key: 'state:a' } });
  t.deepEqual(
    page.items.map((item) => item.id),
    [kept.id],
  );
  t.is((await raw(`/${expired.id}`)).status, 404);
  const across = await client.blackboard.query({ query: { q: 'expired' } });
  t.false(across.items.some((item) => item.id === expired.id));
  const channels = await client.blackboard.channels({ query: { key: 'state:gone' } });
  t.deepEqual(channels.channels, []);
  const stillThere = await client.blackboard.channels({ query: { key: 'state:a' } });
  t.is(stillThere.channels[0]!.posts, 1);
  t.is(stillThere.channels[0]!.latest.id, kept.id);
  const rows = await svc.server.database.sequelize.query<{ n: number }>('SELECT count(*)::int AS n FROM blackboard_items WHERE id = $1', {
    bind: [expired.id],
    type: QueryTypes.SELECT,
  });
  t.is(rows[0]!.n, 1, 'expiry hides the row; the retention cap removes it later');
});

test('channels: counts, participants, snippet, first eight topics and filters over live posts', async (t) => {
  const alice = svc.client({ token: 'alice' });
  const bob = svc.client({ token: 'bob' });
  const topics = ['zeta', 'alpha', 'mu', 'beta', 'kappa', 'gamma', 'delta', 'eta', 'theta', 'iota'];
  for (const [index, topic] of topics.entries())
    await (index % 2 ? alice : bob).blackboard.put({
      body: { key: 'chan:busy', value: { text: `post ${index} ${'long '.repeat(60)}`, topics: [topic], kind: index === 9 ? 'ask' : 'note' } },
    });
  await alice.blackboard.put({ body: { key: 'chan:quiet', value: { text: 'hello', topics: ['quiet-seek'] } } });
  const page = await client.blackboard.channelsPost({ body: { limit: 200 } });
  const busy = page.channels.find((channel) => channel.key === 'chan:busy')!;
  t.is(busy.posts, 10);
  t.is(busy.participants, 2);
  t.deepEqual(busy.topics, [...topics].sort().slice(0, 8));
  t.is(busy.latest.kind, 'ask');
  t.true(busy.latest.snippet.length <= 200);
  t.is(busy.cursor.id, busy.latest.id);
  t.is(page.window_rows, 1000);
  const filtered = await client.blackboard.channels({ query: { topic: 'quiet-seek' } });
  t.deepEqual(
    filtered.channels.map((channel) => channel.key),
    ['chan:quiet'],
  );
  const askers = await client.blackboard.channels({ query: { kind: 'ask', key: 'chan:busy' } });
  t.is(askers.channels[0]!.posts, 10, 'a filter picks the channel; counts cover all its live posts');
  const first = await client.blackboard.channels({ query: { limit: 1 } });
  t.true(first.has_more);
  const second = await client.blackboard.channels({ query: { limit: 1, ...first.history_next! } });
  t.not(second.channels[0]!.key, first.channels[0]!.key);
});

test('reads of more shapes than get named statements still answer every page, records as the put answered them', async (t) => {
  const key = 'shapes:main';
  const alpha = await put(key, { text: 'alpha note', kind: 'note', task: 'guard', topics: ['shape'] });
  const beta = await put(key, { text: 'beta ask', kind: 'ask', topics: ['shape'] });
  // Every subset of four filters under five cursor modes: 80 statement texts, past the 64 that run
  // as named prepared statements (read-items.ts); the rest run unnamed.
  const filters = [{ task: 'guard' }, { kind: 'note' }, { topic: 'shape' }, { q: 'alpha' }];
  const past = new Date(Date.now() - 3_600_000).toISOString();
  const future = new Date(Date.now() + 3_600_000).toISOString();
  const modes = [
    {},
    { before: future },
    { before: future, before_id: 'bb_ffffffffffffffffffffffff' },
    { since: past },
    { since: past, since_id: 'bb_000000000000000000000000' },
  ];
  for (let subset = 0; subset < 16; subset++) {
    const chosen = Object.assign({}, ...filters.filter((_, index) => subset & (1 << index))) as Record<string, string>;
    const expected = subset === 0 || subset === 4 ? [alpha.id, beta.id] : [alpha.id];
    for (const mode of modes) {
      const page = await client.blackboard.query({ query: { key, ...chosen, ...mode } });
      const ids = page.items.map((item) => item.id);
      t.deepEqual('since' in mode ? ids : ids.reverse(), expected, JSON.stringify({ chosen, mode }));
    }
  }
  // A shape none of the above used (parent_id): unnamed whatever ran before, its record as the put answered it.
  const reply = await client.blackboard.put({ body: { key, value: { text: 'reply' }, parent_id: alpha.id } });
  const replies = await client.blackboard.query({ query: { key, parent_id: alpha.id } });
  const { edit_token: _token, original_token_required: _required, deduplicated: _deduplicated, ...record } = reply;
  t.deepEqual(replies.items, [record]);
});
