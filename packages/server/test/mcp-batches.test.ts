import test from 'ava';
import { QueryTypes } from 'sequelize';
import { blackboardContract, mcpBatchRules, mcpContract, urlFor } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * JSON-RPC batches on the MCP endpoints (`mcpBatchRules`), sent raw as a hostile caller sends
 * them: refused at the revisions that have none, and at 2025-03-26 bounded as a whole (count,
 * then the answer's bytes, the calls one at a time) before the first call runs.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

type RpcAnswer = { id: number | string | null; result?: Record<string, unknown>; error?: { code: number; message: string; data?: { code?: string } } };

const baseMcp = () => urlFor(svc.server.urls(), mcpContract.endpoint);
const apiMcp = () => urlFor(svc.server.urls(), blackboardContract.mcp);

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, bytes: Buffer.byteLength(text), json: text ? (JSON.parse(text) as RpcAnswer | RpcAnswer[]) : undefined };
}

const batchOf = (count: number, message: (index: number) => Record<string, unknown>) =>
  Array.from({ length: count }, (_, index) => ({ jsonrpc: '2.0', id: index + 1, ...message(index) }));

for (const [label, url] of [
  ['/mcp', baseMcp],
  ['/api/mcp', apiMcp],
] as const) {
  for (const revision of ['2025-06-18', '2025-11-25']) {
    test(`${label}: a batch at ${revision}, which has none, is refused 400 -32600 before any of it runs`, async (t) => {
      const answer = await post(
        url(),
        batchOf(2, () => ({ method: 'tools/list' })),
        { 'mcp-protocol-version': revision },
      );
      t.is(answer.status, 400, JSON.stringify(answer.json));
      const error = (answer.json as RpcAnswer).error;
      t.is(error?.code, -32600);
      t.is(error?.data?.code, 'mcp_batch_not_supported');
      t.is((answer.json as RpcAnswer).id, null);
    });
  }

  test(`${label}: at 2025-03-26 (said, or no header) a batch of ${mcpBatchRules.maxMessages} messages is answered, one more is refused whole`, async (t) => {
    for (const headers of [{ 'mcp-protocol-version': '2025-03-26' }, {}] as Array<Record<string, string>>) {
      const atCap = await post(
        url(),
        batchOf(mcpBatchRules.maxMessages, () => ({ method: 'ping' })),
        headers,
      );
      t.is(atCap.status, 200, JSON.stringify(atCap.json));
      t.is((atCap.json as RpcAnswer[]).length, mcpBatchRules.maxMessages);
      t.true((atCap.json as RpcAnswer[]).every((member) => member.result !== undefined));
      const past = await post(
        url(),
        batchOf(mcpBatchRules.maxMessages + 1, () => ({ method: 'ping' })),
        headers,
      );
      t.is(past.status, 400, JSON.stringify(past.json));
      t.is((past.json as RpcAnswer).error?.code, -32600);
      t.is((past.json as RpcAnswer).error?.data?.code, 'mcp_batch_too_large');
    }
  });
}

/**
 * Whether a member was not run for the budget: a JSON-RPC error on /mcp; on /api/mcp, whose tool
 * answers every error as a result, an `isError` result with the same code.
 */
const notRunForBudget = (member: RpcAnswer) =>
  member.error?.data?.code === 'mcp_batch_answer_full' ||
  (member.result?.isError === true && (member.result.structuredContent as { code?: string } | undefined)?.code === 'mcp_batch_answer_full');

/** The members' answers in id order, and which were not run for the budget. */
function members(answer: { json: RpcAnswer | RpcAnswer[] | undefined }) {
  const list = [...(answer.json as RpcAnswer[])].sort((a, b) => Number(a.id) - Number(b.id));
  return { list, ran: list.filter((member) => !notRunForBudget(member)), notRun: list.filter(notRunForBudget) };
}

// Since tools/list is about 62 KB (issue 43, was 356 KB), 16 of them fit in the 1 MiB budget: the
// batch is answered whole, and the stop itself is shown by the reads below. Were the list to grow
// past budget / 16 again, the same assertions check that the batch stops at the budget.
test('/mcp at 2025-03-26: a batch of tools/list is held to its answer budget; calls past it, if any, are not run and say so', async (t) => {
  const single = await post(baseMcp(), { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '2025-03-26' });
  const one = single.bytes;
  t.true(one > 10_000, `one tools/list answer is ${one} bytes`);
  const answer = await post(
    baseMcp(),
    batchOf(mcpBatchRules.maxMessages, () => ({ method: 'tools/list' })),
    { 'mcp-protocol-version': '2025-03-26' },
  );
  t.is(answer.status, 200);
  const { list, ran, notRun } = members(answer);
  t.is(list.length, mcpBatchRules.maxMessages, 'every message is answered');
  // The answers so far reach the budget with the call that passes it; the calls after it did not run.
  const runnable = Math.min(mcpBatchRules.maxMessages, Math.ceil(mcpBatchRules.answerBudgetBytes / one));
  t.is(ran.length, runnable);
  t.is(notRun.length, mcpBatchRules.maxMessages - runnable);
  t.deepEqual(
    list.slice(ran.length).map((member) => member.id),
    notRun.map((member) => member.id),
    'the first calls run, in order; the later ones do not',
  );
  if (notRun.length > 0) t.is(notRun[0]!.error!.code, -32000);
  t.true(answer.bytes <= mcpBatchRules.answerBudgetBytes + one + notRun.length * 400, `answer of ${answer.bytes} bytes`);
});

test('/mcp at 2025-03-26: the reads of a batch run one at a time within its answer budget (a large channel read 32 times)', async (t) => {
  const key = 'mcp-batches:large';
  const pad = 'p'.repeat(60_000);
  for (let index = 0; index < 16; index++) await svc.client().blackboard.put({ body: { key, value: { text: `post ${index}`, pad } } });
  const read = { method: 'resources/read', params: { uri: `svc://blackboard/${key}` } };
  const single = await post(baseMcp(), { jsonrpc: '2.0', id: 1, ...read }, { 'mcp-protocol-version': '2025-03-26' });
  t.is(single.status, 200);
  const one = single.bytes;
  t.true(one > 900_000, `one read answers ${one} bytes`);
  const answer = await post(
    baseMcp(),
    batchOf(mcpBatchRules.maxMessages, () => read),
    { 'mcp-protocol-version': '2025-03-26' },
  );
  const { ran, notRun } = members(answer);
  t.is(ran.length, Math.ceil(mcpBatchRules.answerBudgetBytes / one), 'reads run until the answer passes its budget');
  t.is(ran.length + notRun.length, mcpBatchRules.maxMessages);
  t.true(answer.bytes <= mcpBatchRules.answerBudgetBytes + one + notRun.length * 400, `answer of ${answer.bytes} bytes`);
});

test('/api/mcp at 2025-03-26: the tool calls of a batch pass the same budget', async (t) => {
  const key = 'mcp-batches:api-large';
  const pad = 'q'.repeat(60_000);
  for (let index = 0; index < 16; index++) await svc.client().blackboard.put({ body: { key, value: { text: `post ${index}`, pad } } });
  const get = { method: 'tools/call', params: { name: 'blackboard', arguments: { op: 'get', key } } };
  const answer = await post(
    apiMcp(),
    batchOf(mcpBatchRules.maxMessages, () => get),
    { 'mcp-protocol-version': '2025-03-26' },
  );
  t.is(answer.status, 200);
  const { ran, notRun } = members(answer);
  t.true(ran.length >= 1 && ran.length <= 3, `${ran.length} calls ran`);
  t.is(ran.length + notRun.length, mcpBatchRules.maxMessages);
  // At most the budget plus the call that passed it (whose REST route bounds it), and a short error for each call not run.
  const one = (await post(apiMcp(), { jsonrpc: '2.0', id: 1, ...get }, { 'mcp-protocol-version': '2025-03-26' })).bytes;
  t.true(answer.bytes <= mcpBatchRules.answerBudgetBytes + one + notRun.length * 400, `answer of ${answer.bytes} bytes, one call's ${one}`);
});

test("/mcp at 2025-03-26: each tool call of a batch is a request of the caller's key (its requests per minute), and the calls run one after another (one in flight)", async (t) => {
  const agent = await signInAgent(svc);
  const key = await agent.client.credentials.create({
    body: { name: 'batch-limits', scopes: ['models:read'], limits: { requests_per_minute: 3, concurrent_requests: 1 } },
  });
  // The calls fall in one minute's window.
  if (Date.now() % 60_000 > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));
  const answer = await post(
    baseMcp(),
    batchOf(5, () => ({ method: 'tools/call', params: { name: 'models_list', arguments: {} } })),
    { 'mcp-protocol-version': '2025-03-26', authorization: `Bearer ${key.secret}` },
  );
  t.is(answer.status, 200, JSON.stringify(answer.json));
  const results = members(answer).list.map((member) => member.result as { isError?: boolean; structuredContent?: { code?: string } });
  // Run one at a time, none is refused for concurrency; the fourth and fifth pass the minute's three.
  t.deepEqual(
    results.map((result) => (result.isError ? result.structuredContent?.code : 'ok')),
    ['ok', 'ok', 'ok', 'key_limit_exceeded:requests_per_minute', 'key_limit_exceeded:requests_per_minute'],
  );
});

/** Statements on the cancellations table while `work` runs (the server's own query runner, watched, not replaced). */
async function cancellationStatements(work: () => Promise<unknown>): Promise<number> {
  const { sequelize } = svc.server.deps.database;
  let count = 0;
  const query = sequelize.query;
  sequelize.query = function (this: unknown, sql: unknown, ...rest: unknown[]) {
    if (String(typeof sql === 'object' && sql !== null && 'query' in sql ? sql.query : sql).includes('mcp_cancelled_calls')) count++;
    return (query as (...args: unknown[]) => unknown).call(this, sql, ...rest);
  } as typeof sequelize.query;
  try {
    await work();
  } finally {
    sequelize.query = query;
  }
  return count;
}

const cancelledRows = async (caller: string) =>
  (
    await svc.server.deps.database.sequelize.query<{ count: string }>('SELECT count(*) AS count FROM mcp_cancelled_calls WHERE caller LIKE :caller', {
      replacements: { caller },
      type: QueryTypes.SELECT,
    })
  )[0]!.count;

test.serial("/mcp: a batch's cancellations of calls not running here are one statement; past the cap, none is recorded", async (t) => {
  const cancel = (index: number) => ({ method: 'notifications/cancelled', params: { requestId: `gone-${index}` } });
  const notifications = (count: number) => Array.from({ length: count }, (_, index) => ({ jsonrpc: '2.0', ...cancel(index) }));
  const statements = await cancellationStatements(async () => {
    const answer = await post(baseMcp(), notifications(mcpBatchRules.maxMessages), { 'mcp-protocol-version': '2025-03-26' });
    t.is(answer.status, 202);
  });
  t.is(statements, 1, 'one statement for the batch');
  t.is(await cancelledRows('anonymous:%'), String(mcpBatchRules.maxMessages));
  // A 1 MB batch of 11,000 cancellations: refused whole, before one is recorded.
  await svc.server.deps.database.sequelize.query('DELETE FROM mcp_cancelled_calls');
  const started = performance.now();
  const flood = await post(baseMcp(), notifications(11_000), { 'mcp-protocol-version': '2025-03-26' });
  t.is(flood.status, 400);
  t.is((flood.json as RpcAnswer).error?.data?.code, 'mcp_batch_too_large');
  t.is(await cancelledRows('%'), '0');
  t.true(performance.now() - started < 2_000, `answered in ${Math.round(performance.now() - started)} ms`);
});

test('/a2a takes no batch: an array is refused whole, 400 -32600, with or without a credential, and says why', async (t) => {
  const agent = await signInAgent(svc);
  const key = await agent.client.credentials.create({ body: { name: 'a2a-batch', scopes: ['inference:invoke'] } });
  const send = (index: number) => ({
    method: 'SendMessage',
    params: { message: { role: 'ROLE_USER', messageId: `m-${index}`, parts: [{ text: 'hello' }], metadata: { skill: 'inference.rerank' } } },
  });
  for (const headers of [{}, { authorization: `Bearer ${key.secret}` }] as Array<Record<string, string>>) {
    const answer = await post(`${svc.baseUrl}/a2a`, batchOf(2, send), { ...headers, 'a2a-version': '1.0' });
    t.is(answer.status, 400, JSON.stringify(answer.json));
    const { error, id } = answer.json as RpcAnswer;
    t.is(error?.code, -32600);
    t.is(error?.data?.code, 'invalid_json_rpc');
    t.regex(error?.message ?? '', /one request object per POST, not a batch/);
    t.is(id, null);
  }
});

test("/mcp at 2025-03-26: each tool call of a batch is held to its own route's body cap, at its edge (PATCH credentials: 4096 bytes)", async (t) => {
  const agent = await signInAgent(svc);
  const key = await agent.client.credentials.create({ body: { name: 'batch-body-cap', scopes: ['models:read'] } });
  // The REST body of the call is `{ limits }` (the id goes to the path): padded to the cap, and one byte past it.
  const limitsOfLength = (bytes: number) => ({ pad: 'x'.repeat(bytes - JSON.stringify({ limits: { pad: '' } }).length) });
  const update = (limits: Record<string, unknown>) => ({
    method: 'tools/call',
    params: { name: 'credentials_update', arguments: { credential_id: key.credential.credential_id, limits } },
  });
  const answer = await post(
    baseMcp(),
    [
      { jsonrpc: '2.0', id: 1, ...update(limitsOfLength(4096)) },
      { jsonrpc: '2.0', id: 2, ...update(limitsOfLength(4097)) },
      { jsonrpc: '2.0', id: 3, ...update({ requests_per_minute: 7 }) },
    ],
    { 'mcp-protocol-version': '2025-03-26', authorization: `Bearer ${agent.session.accessToken}` },
  );
  t.is(answer.status, 200, JSON.stringify(answer.json));
  const codes = members(answer).list.map((member) => {
    const result = member.result as { isError?: boolean; structuredContent?: { code?: string } };
    return result.isError ? result.structuredContent?.code : 'ok';
  });
  // At the cap the body is read and refused for its unknown field; past it, refused for its size unread.
  t.deepEqual(codes, ['validation_failed', 'payload_too_large', 'ok']);
});
