import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { deriveChannelKey } from '@svc/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

test('deriveChannelKey from @svc/client is the key the server derives', async (t) => {
  const client = svc.client();
  const created = await client.blackboard.put({ body: { key_from: { input: 'Rank  these\tpassages', task: 'rag' }, value: { text: 'ranking' } } });
  t.is(created.key, deriveChannelKey('rank these passages', 'rag'));
  const page = await client.blackboard.get({ query: { key: deriveChannelKey('RANK these passages ', 'rag') } });
  t.deepEqual(
    page.items.map((item) => item.id),
    [created.id],
  );
});

test('watch of a key follows its push stream: new posts in order, none repeated, stops on abort', async (t) => {
  const client = svc.client();
  const key = 'watch:one';
  await client.blackboard.put({ body: { key, value: { text: 'before the watch' } } });
  const stop = new AbortController();
  // A missed post must fail the test, not leave the watch polling for ever.
  const deadline = setTimeout(() => stop.abort(), 20_000);
  const seen: string[] = [];
  const posted: string[] = [];
  // The watch starts where its stream starts (after the newest post then): a post made before
  // that is rightly not yielded. So the posts wait for the stream's start (onCursor's first call).
  let anchored!: () => void;
  const anchor = new Promise<void>((resolve) => (anchored = resolve));
  const watching = (async () => {
    for await (const post of client.blackboard.watch({ key, signal: stop.signal, onCursor: () => anchored() })) {
      seen.push(post.item.text);
      if (seen.length === 7) stop.abort();
    }
  })();
  await anchor;
  for (let index = 0; index < 7; index++) {
    posted.push(`new ${index}`);
    await client.blackboard.put({ body: { key, value: { text: `new ${index}` } } });
  }
  await watching;
  clearTimeout(deadline);
  t.deepEqual(seen, posted, 'only posts after the start, none repeated, oldest first');
});

test('watch of filters polls: waits 5, 10, 20, then 30 s with upward jitter, resets on activity, never below 5 s', async (t) => {
  const client = svc.client();
  const waits: number[] = [];
  const stop = new AbortController();
  const received: string[] = [];
  // Records each requested wait and returns at once; after the fifth idle wait a post arrives.
  const sleep = async (ms: number) => {
    waits.push(ms);
    if (waits.length === 5) await client.blackboard.put({ body: { key: 'watch:backoff', value: { text: 'wake' } } });
    if (waits.length === 8) stop.abort();
  };
  for await (const post of client.blackboard.watch({ filters: { key: 'watch:backoff' }, signal: stop.signal, sleep })) received.push(post.item.text);
  t.deepEqual(received, ['wake']);
  const steps = [5_000, 10_000, 20_000, 30_000, 30_000, 5_000, 10_000, 20_000];
  t.is(waits.length, steps.length);
  waits.forEach((wait, index) => t.true(wait >= steps[index]! && wait <= steps[index]! * 1.2, `wait ${index}: ${wait} vs ${steps[index]}`));

  // Even a schedule shorter than the floor never polls sooner than 5 s.
  const floored: number[] = [];
  const floorStop = new AbortController();
  for await (const _ of client.blackboard.watch({
    filters: { key: 'watch:floor' },
    signal: floorStop.signal,
    backoffMs: [1, 2],
    sleep: async (ms) => void (floored.push(ms) === 3 && floorStop.abort()),
  }))
    t.fail();
  t.deepEqual(floored, [5_000, 5_000, 5_000]);
});

async function mcpClient() {
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.apiUrl}/api/mcp`)));
  return client;
}

test('MCP: one tool named blackboard with the spec schema and annotations', async (t) => {
  const client = await mcpClient();
  try {
    const { tools } = await client.listTools();
    t.deepEqual(
      tools.map((tool) => tool.name),
      ['blackboard'],
    );
    const tool = tools[0]!;
    t.deepEqual(tool.annotations && { ...tool.annotations, title: undefined }, {
      title: undefined,
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    });
    const schema = tool.inputSchema as unknown as {
      properties: Record<string, { enum?: string[]; maxLength?: number; minLength?: number }>;
      required: string[];
      additionalProperties: boolean;
    };
    t.deepEqual(schema.required, ['op']);
    t.false(schema.additionalProperties);
    t.deepEqual(schema.properties.op!.enum, ['put', 'get', 'query', 'channels', 'tombstone']);
    t.deepEqual(
      Object.keys(schema.properties).sort(),
      [
        'op',
        'key',
        'key_from',
        'value',
        'id',
        'edit_token',
        'idempotency_key',
        'input',
        'task',
        'kind',
        'topics',
        'topic',
        'q',
        'artifact_id',
        'revision',
        'solution_scope',
        'parent_id',
        'thread_id',
        'limit',
        'expires_in',
        'since',
        'since_id',
        'before',
        'before_id',
      ].sort(),
    );
    t.is(schema.properties.edit_token!.minLength, 1);
    t.is(schema.properties.edit_token!.maxLength, 200);
  } finally {
    await client.close();
  }
});

test('MCP: put, get, query, channels and tombstone through the SDK client', async (t) => {
  const client = await mcpClient();
  try {
    const call = async (args: Record<string, unknown>) => {
      const result = await client.callTool({ name: 'blackboard', arguments: args });
      return { isError: Boolean(result.isError), data: result.structuredContent as Record<string, any> };
    };
    const put = await call({
      op: 'put',
      input: 'Classify  this ticket',
      task: 'support',
      value: { text: 'seeking a ticket router' },
      kind: 'ask',
      topics: ['seek'],
    });
    t.false(put.isError, JSON.stringify(put.data));
    t.is(put.data.key, deriveChannelKey('classify this ticket', 'support'));
    t.is(put.data.item.task, 'tickets');
    t.is(put.data.item.kind, 'ask');
    const got = await call({ op: 'get', key: put.data.key });
    t.deepEqual(
      got.data.items.map((item: { id: string }) => item.id),
      [put.data.id],
    );
    const queried = await call({ op: 'query', topic: 'seek', limit: 5 });
    t.true(queried.data.items.some((item: { id: string }) => item.id === put.data.id));
    const channels = await call({ op: 'channels', key: put.data.key });
    t.is(channels.data.channels[0].posts, 1);
    const conflict = await call({ op: 'put', key: 'mcp:x', value: { text: 'a', kind: 'note' }, kind: 'ask' });
    t.true(conflict.isError);
    t.is(conflict.data.code, 'blackboard_field_conflict:kind');
    const wrongOp = await call({ op: 'get', key: 'mcp:x', topic: 'seek' });
    t.true(wrongOp.isError, 'arguments an op does not take are refused');
    const tomb = await call({ op: 'tombstone', id: put.data.id, edit_token: put.data.edit_token });
    t.true(tomb.data.tombstone);
    const after = await call({ op: 'get', key: put.data.key });
    t.deepEqual(after.data.items, []);
    const extra = await client.callTool({ name: 'blackboard', arguments: { op: 'get', key: 'k', surprise: true } });
    t.true(Boolean(extra.isError), 'additional properties are rejected');
  } finally {
    await client.close();
  }
});
