import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { z } from 'zod';
import { defineContract, defineRoute, paging } from '@svc/schemas';
import { createContractClient, resolveOptions, SvcError, Transport } from '../src/index.ts';

/**
 * The paging walker against a small server this test scripts: it stands for a server that
 * answers the same cursor again or a page without its list, which svc never does.
 */
const Page = z.object({ things: z.array(z.string()), next: z.string().nullable() });
const fakeContract = defineContract({
  list: defineRoute({
    method: 'GET',
    path: '/v1/things',
    surface: 'base',
    auth: { kind: 'public' },
    summary: 'List',
    query: z.object({ after: z.string().optional() }),
    responses: { 200: Page },
    paging: paging({ items: 'things', cursor: 'next', cursorIn: 'query', cursorParam: 'after' }),
  }),
});

let fake: Server;
let requests: string[] = [];
/** Answers by the `after` query: a page, then the same cursor forever, a cycle of two, or a page without items. */
const pages: Record<string, unknown> = {
  '': { things: ['a', 'b'], next: 'c1' },
  c1: { things: ['c'], next: 'c2' },
  c2: { things: ['d'], next: 'c2' },
  cycle1: { things: ['x'], next: 'cycle2' },
  cycle2: { things: ['y'], next: 'cycle1' },
  broken: { next: null },
};

test.before(async () => {
  fake = createServer((request, response) => {
    requests.push(request.url!);
    const after = new URL(request.url!, 'http://x').searchParams.get('after') ?? '';
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(pages[after] ?? { things: [], next: null }));
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
});
test.after.always(() => {
  fake?.closeAllConnections();
  fake?.close();
});

const client = () =>
  createContractClient(fakeContract, new Transport(resolveOptions({ baseUrl: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, retry: 0 }))).methods;

test.serial('a server that answers the same cursor twice ends the walk with paging_stalled, after the items it did send', async (t) => {
  requests = [];
  const seen: string[] = [];
  const error = await t.throwsAsync(async () => {
    for await (const thing of client().list.all()) seen.push(thing);
  });
  t.true(SvcError.isInstance(error));
  t.is((error as SvcError).code, 'paging_stalled');
  t.deepEqual(seen, ['a', 'b', 'c', 'd']);
  t.deepEqual(requests, ['/v1/things', '/v1/things?after=c1', '/v1/things?after=c2']);
});

test.serial('a cycle of cursors is caught too: the walk ends at the first cursor given twice', async (t) => {
  requests = [];
  const seen: string[] = [];
  const error = await t.throwsAsync(async () => {
    for await (const thing of client().list.all({ query: { after: 'cycle1' } })) seen.push(thing);
  });
  t.is((error as SvcError).code, 'paging_stalled');
  t.deepEqual(seen, ['x', 'y', 'x']);
  t.deepEqual(requests, ['/v1/things?after=cycle1', '/v1/things?after=cycle2', '/v1/things?after=cycle1']);
});

test.serial('a page without its list is an unexpected_response, not an empty walk', async (t) => {
  const error = await t.throwsAsync(async () => {
    for await (const thing of client().list.all({ query: { after: 'broken' } })) t.fail(`unexpected ${thing}`);
  });
  t.is((error as SvcError).code, 'unexpected_response');
});

test.serial('maxPages is checked like limit: a whole number of 0 or more', async (t) => {
  requests = [];
  t.deepEqual(await collect(client().list.pages({}, { maxPages: 0 })), []);
  t.is((await collect(client().list.pages({}, { maxPages: 1 }))).length, 1);
  const error = await t.throwsAsync(collect(client().list.pages({}, { maxPages: -1 })));
  t.is((error as SvcError).code, 'invalid_paging_option');
  t.is(requests.length, 1);
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
