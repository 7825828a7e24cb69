import test from 'ava';
import { z } from 'zod';
import { contract, isRoute, walkContract, type PagingSpec, type RouteDefinition } from '@svc/schemas';
import { SvcError, type SvcClient } from '../src/index.ts';
// The client package never depends on the server; its tests borrow the server's test helpers.
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { createKey, signInAgent } from '@svc/testing/identity';

/** The client's `.all()` and `.pages()`, derived from each route's paging declaration, against a real server. */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_DEVELOPER_KEYS_MAX_ACTIVE: '20', SVC_CATALOG_DEMO: 'on' } });
});
test.after.always(async () => {
  await svc?.close();
});

/** A client whose fetch counts requests, so a test can see how many pages were asked for. */
function countingClient(token?: string): { client: SvcClient; requests: string[] } {
  const requests: string[] = [];
  const client = svc.client({
    token,
    fetch: (input, init) => {
      requests.push(input instanceof Request ? input.url : String(input));
      return fetch(input, init);
    },
  });
  return { client, requests };
}

async function agentWithKeys(count: number) {
  const agent = await signInAgent(svc);
  const created: string[] = [];
  for (let index = 0; index < count; index++) created.push((await createKey(agent.client, ['models:read'], `key ${index}`)).credential.credential_id);
  return { ...agent, created };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The JSON object a route answers; a route that may also answer CSV or an event stream pages over its JSON. */
const shapeOf = (schema: unknown): Record<string, z.ZodType> | undefined => {
  const json =
    schema && typeof schema === 'object' && 'kind' in schema && (schema.kind === 'json-or-bytes' || schema.kind === 'json-or-sse')
      ? (schema as unknown as { json: unknown }).json
      : schema;
  return json instanceof z.ZodObject ? (json.shape as Record<string, z.ZodType>) : undefined;
};

test('every paging declaration names fields its route really has, and every cursor-bearing answer declares paging', (t) => {
  const cursorFields = ['next_cursor', 'nextCursor', 'history_next'];
  let declared = 0;
  for (const { id, route } of walkContract(contract)) {
    const success = shapeOf(route.responses[200]);
    const spec: PagingSpec | undefined = route.paging;
    if (!spec) {
      t.false(
        cursorFields.some((name) => success?.[name] !== undefined),
        `${id} answers a cursor but declares no paging`,
      );
      continue;
    }
    declared += 1;
    t.truthy(success, `${id}: paging needs a JSON object answer`);
    t.true(success![spec.items] instanceof z.ZodArray, `${id}: ${spec.items} is a list`);
    for (const name of typeof spec.cursor === 'string' ? [spec.cursor] : spec.cursor) t.truthy(success![name], `${id}: answer has ${name}`);
    if (spec.hasMore) t.truthy(success![spec.hasMore], `${id}: answer has ${spec.hasMore}`);
    const request = shapeOf(route[spec.cursorIn]);
    t.truthy(request, `${id}: the cursor goes into its ${spec.cursorIn}`);
    if (spec.cursorParam) t.truthy(request![spec.cursorParam], `${id}: ${spec.cursorIn} has ${spec.cursorParam}`);
  }
  t.true(declared >= 10);
  t.true(isRoute(contract.developerKeys.list) && (contract.developerKeys.list as RouteDefinition).paging !== undefined);
});

test('the OpenAPI document publishes each paging declaration as x-svc-paging', async (t) => {
  const document = (await (await fetch(`${svc.baseUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, Record<string, unknown>>> };
  t.deepEqual(document.paths['/v1/developer/credentials']!.get!['x-svc-paging'], contract.developerKeys.list.paging);
  t.deepEqual(document.paths['/api/v1/blackboard/get']!.post!['x-svc-paging'], contract.blackboard.getPost.paging);
  t.is(document.paths['/v1/developer/credentials']!.post!['x-svc-paging'], undefined);
});

test('credentials.list.all walks every page lazily, newest first, matching the pages one by one', async (t) => {
  const { session, created } = await agentWithKeys(5);
  const { client, requests } = countingClient(session.accessToken);
  const ids: string[] = [];
  for await (const key of client.credentials.list.all({ query: { limit: 2 } })) ids.push(key.credential_id);
  t.deepEqual(ids, [...created].reverse());
  t.is(requests.length, 3, 'five keys two to a page are three pages');
  t.regex(requests[1]!, /[?&]cursor=/);

  const pages = [];
  for await (const page of client.credentials.list.pages({ query: { limit: 2 } })) pages.push(page);
  t.deepEqual(
    pages.map((page) => page.data.length),
    [2, 2, 1],
  );
  t.deepEqual(
    pages.flatMap((page) => page.data.map((key) => key.credential_id)),
    ids,
  );
  t.is(pages.at(-1)!.next_cursor, null);

  const two = [];
  for await (const page of client.credentials.list.pages({ query: { limit: 2 } }, { maxPages: 2 })) two.push(page);
  t.is(two.length, 2);
});

test('nothing is fetched until the loop asks; break stops fetching; limit caps the total at its edge', async (t) => {
  const { session, created } = await agentWithKeys(5);
  const { client, requests } = countingClient(session.accessToken);
  const walk = client.credentials.list.all({ query: { limit: 2 } });
  t.is(requests.length, 0, 'creating the iterator fetches nothing');
  for await (const key of walk) {
    t.is(key.credential_id, created.at(-1)!);
    break;
  }
  t.is(requests.length, 1, 'breaking after the first item fetched one page only');

  requests.length = 0;
  const three = await collect(client.credentials.list.all({ query: { limit: 2 } }, { limit: 3 }));
  t.deepEqual(
    three.map((key) => key.credential_id),
    [...created].reverse().slice(0, 3),
  );
  t.is(requests.length, 2, 'the third item is on the second page; no third page is asked for');

  requests.length = 0;
  t.is((await collect(client.credentials.list.all({ query: { limit: 2 } }, { limit: 5 }))).length, 5);
  t.is((await collect(client.credentials.list.all({ query: { limit: 2 } }, { limit: 6 }))).length, 5);
  t.is((await collect(client.credentials.list.all({}, { limit: 0 }))).length, 0);
  t.is(requests.length, 6, 'limit 5 ends on the last page; limit 6 reads to the end; limit 0 asks nothing');

  for (const limit of [-1, 1.5, Number.NaN]) {
    const error = await t.throwsAsync(collect(client.credentials.list.all({}, { limit })));
    t.true(SvcError.isInstance(error));
    t.is((error as SvcError).code, 'invalid_paging_option');
  }
});

test('an aborted signal stops the walk between pages with its reason', async (t) => {
  const { session } = await agentWithKeys(3);
  const { client, requests } = countingClient(session.accessToken);
  const stop = new AbortController();
  const seen: string[] = [];
  const error = await t.throwsAsync(async () => {
    for await (const key of client.credentials.list.all({ query: { limit: 1 } }, { signal: stop.signal })) {
      seen.push(key.credential_id);
      stop.abort(new Error('enough'));
    }
  });
  t.is(error?.message, 'enough');
  t.is(seen.length, 1);
  t.is(requests.length, 1);

  const already = new AbortController();
  already.abort(new Error('before'));
  await t.throwsAsync(collect(client.credentials.list.all({}, { signal: already.signal })), { message: 'before' });
  t.is(requests.length, 1, 'an aborted signal sends nothing');
});

test("credentials.receipts.all walks a key's receipts oldest first", async (t) => {
  const { client: agent } = await signInAgent(svc);
  const key = await createKey(agent, ['models:read']);
  const rotated = await agent.credentials.rotate({ params: { credential_id: key.credential.credential_id } });
  await agent.credentials.revoke({ params: { credential_id: rotated.credential.credential_id } });
  const events = [];
  for await (const receipt of agent.credentials.receipts.all({ params: { credential_id: rotated.credential.credential_id }, query: { limit: 1 } }))
    events.push(receipt.event);
  const onePage = await agent.credentials.receipts({ params: { credential_id: rotated.credential.credential_id }, query: { limit: 100 } });
  t.true(events.length >= 2);
  t.deepEqual(
    events,
    onePage.data.map((receipt) => receipt.event),
  );
});

test('blackboard reads walk history back and polls forward; GET and POST forms page alike', async (t) => {
  const client = svc.client();
  const key = 'paging:walk';
  const posted: string[] = [];
  for (let index = 0; index < 7; index++) posted.push((await client.blackboard.put({ body: { key, value: { text: `post ${index}` } } })).id);

  const back = await collect(client.blackboard.get.all({ query: { key, limit: 3 } }));
  t.deepEqual(
    back.map((item) => item.id),
    [...posted].reverse(),
    'newest first over three pages',
  );
  const backByPost = await collect(client.blackboard.getPost.all({ body: { key, limit: 2 } }));
  t.deepEqual(
    backByPost.map((item) => item.id),
    [...posted].reverse(),
  );

  const first = await client.blackboard.get({ query: { key, limit: 7 } });
  const oldest = first.items.at(-1)!;
  const forward = await collect(client.blackboard.get.all({ query: { key, limit: 2, since: oldest.created_at, since_id: oldest.id } }));
  t.deepEqual(
    forward.map((item) => item.id),
    posted.slice(1),
    'oldest first after the cursor, ending when nothing more is there',
  );

  const queried = await collect(client.blackboard.queryPost.all({ body: { key, limit: 4 } }, { limit: 5 }));
  t.deepEqual(
    queried.map((item) => item.id),
    [...posted].reverse().slice(0, 5),
  );

  for (let index = 0; index < 3; index++) await client.blackboard.put({ body: { key: `paging:channel-${index}`, value: { text: 'hello' } } });
  const channels = await collect(client.blackboard.channels.all({ query: { q: 'hello', limit: 1 } }));
  t.deepEqual(channels.map((channel) => channel.key).sort(), ['paging:channel-0', 'paging:channel-1', 'paging:channel-2']);
});

test('catalog.search.all and catalog.files.all page by offset cursor to the same rows as one large page', async (t) => {
  const client = svc.client();
  const whole = await client.catalog.search({ query: { limit: 100 } });
  t.true(whole.rows.length > 2);
  const walked = await collect(client.catalog.search.all({ query: { limit: 2 } }));
  t.deepEqual(
    walked.map((row) => row.id),
    whole.rows.map((row) => row.id),
  );

  let files: Awaited<ReturnType<typeof client.catalog.files>> | undefined;
  for (const row of whole.rows) {
    files = await client.catalog.files({ params: { id: row.id }, query: { limit: 500 } });
    if (files.rows.length > 1) break;
  }
  t.true(files!.rows.length > 1, 'the demo catalog has an artifact of several files');
  const filesWalked = await collect(client.catalog.files.all({ params: { id: files!.artifactId }, query: { limit: 1 } }));
  t.deepEqual(
    filesWalked.map((file) => file.path),
    files!.rows.map((file) => file.path),
  );
});
