import test from 'ava';
import { createTestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The global windows, counted in the database: with PostgreSQL (TEST_DATABASE_URL) two server
 * replicas share one database and must admit exactly the cap between them; on the embedded
 * database (one process only) a single server must.
 */
async function replicas(env: Record<string, string>): Promise<{ servers: TestServer[]; close(): Promise<void> }> {
  const database = await createTestDatabase();
  const count = database.kind === 'postgres' ? 2 : 1;
  const servers: TestServer[] = [];
  for (let index = 0; index < count; index++) servers.push(await startTestServer({ database, env: { SVC_TRUST_PROXY: 'true', ...env } }));
  return {
    servers,
    async close() {
      for (const server of servers) await server.close();
      await database.drop();
    },
  };
}

function putTo(server: TestServer, index: number, text: string) {
  return fetch(`${server.apiUrl}/api/v1/blackboard/put`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.2.0.${index}`, authorization: `Bearer shared-${index}` },
    body: JSON.stringify({ key: `shared:${index}`, value: { text } }),
  }).then(async (response) => ({ status: response.status, code: ((await response.json()) as { code?: string }).code }));
}

test.serial('global posts: concurrent puts across replicas admit exactly the cap', async (t) => {
  const { servers, close } = await replicas({ SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR: '25' });
  try {
    const answers = await Promise.all(Array.from({ length: 60 }, (_, index) => putTo(servers[index % servers.length]!, index, `p${index}`)));
    t.is(answers.filter((answer) => answer.status === 201).length, 25, JSON.stringify(answers));
    t.true(answers.filter((answer) => answer.status !== 201).every((answer) => answer.status === 429 && answer.code === 'blackboard_admission:global_posts'));
    const page = await servers[servers.length - 1]!.client().blackboard.query({ query: { limit: 200 } });
    t.is(page.items.length, 25, 'refused puts stored nothing');
  } finally {
    await close();
  }
});

test.serial('global bytes: the cap passes exactly, one byte more is refused, on every replica', async (t) => {
  const { servers, close } = await replicas({ SVC_BLACKBOARD_GLOBAL_BYTES_PER_HOUR: '2000' });
  try {
    const overhead = JSON.stringify({ text: '' }).length;
    t.is((await putTo(servers[0]!, 1, 'a'.repeat(1200 - overhead))).status, 201);
    t.is((await putTo(servers[servers.length - 1]!, 2, 'b'.repeat(800 - overhead))).status, 201);
    for (const server of servers) {
      const refused = await putTo(server, 3, '');
      t.is(refused.status, 429);
      t.is(refused.code, 'blackboard_admission:global_bytes');
    }
  } finally {
    await close();
  }
});

test.serial('a poller across replicas sees every post exactly once while puts race on both', async (t) => {
  const { servers, close } = await replicas({});
  try {
    const key = 'shared:poll';
    const reader = servers[0]!.client();
    const anchor = (await reader.blackboard.get({ query: { key } })).poll_next!;
    let cursor: { since: string; since_id?: string } = { since: anchor.since };
    const seen: string[] = [];
    const poll = async () => {
      for (;;) {
        const page = await reader.blackboard.get({ query: { key, limit: 7, ...cursor } });
        seen.push(...page.items.map((item) => item.id));
        cursor = { since: page.poll_next!.since, ...(page.poll_next!.since_id ? { since_id: page.poll_next!.since_id } : {}) };
        if (!page.has_more) return;
      }
    };
    const posted: string[] = [];
    let writing = true;
    const writers = Promise.all(
      servers.flatMap((server, serverIndex) =>
        Array.from({ length: 3 }, async (_, writer) => {
          for (let index = 0; index < 15; index++)
            posted.push(
              (await server.client({ token: `writer-${serverIndex}-${writer}` }).blackboard.put({ body: { key, value: { text: `w${writer} #${index}` } } })).id,
            );
        }),
      ),
    ).finally(() => (writing = false));
    while (writing) await poll();
    await writers;
    await poll();
    t.is(seen.length, posted.length, 'no post repeated or missed');
    t.deepEqual([...seen].sort(), [...posted].sort());
  } finally {
    await close();
  }
});
