import test from 'ava';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mcpContract, urlFor } from '@svc/schemas';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * Lists whose cursor once cut created_at to the millisecond (catalog requests, developer keys)
 * page by the microsecond now (db/keyset-page.ts), and the operator view of catalog requests is
 * the contract's (`everyone` on the route), enforced by the adapter with one code.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_OAUTH_TOKEN_RATE_PER_MINUTE: '100000' } });
});
test.after.always(async () => {
  await svc?.close();
});

const feature = (capability: string) => ({ capability, task: 'rerank', use_case: 'rank German court rulings for a legal assistant' });

/** Creation times within one millisecond, in the order of `ids`. */
async function sameMillisecond(table: string, ids: readonly string[]): Promise<void> {
  for (const [index, id] of ids.entries()) {
    await svc.server.database.sequelize.query(`UPDATE ${table} SET created_at = :at::timestamptz WHERE id = :id`, {
      replacements: { at: `2026-01-01T00:00:00.123${String(index + 1).padStart(3, '0')}Z`, id },
    });
  }
}

test('catalog requests made in the same millisecond are each on a page of one', async (t) => {
  const { client } = await signInAgent(svc);
  const filed: string[] = [];
  for (const capability of ['a', 'b', 'c']) filed.push((await client.requests.feature({ body: feature(`a reranker ${capability}`) })).request_id);
  await sameMillisecond('catalog_requests', filed);
  const walked: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.requests.status({ query: { limit: 1, cursor } });
    walked.push(...page.data.map((entry) => entry.request_id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  t.deepEqual(walked, [...filed].reverse());
});

test('developer keys made in the same millisecond are each on a page of one', async (t) => {
  const { client } = await signInAgent(svc);
  const made: string[] = [];
  for (const name of ['a', 'b', 'c']) made.push((await client.credentials.create({ body: { name, scopes: ['models:read'] } })).credential.credential_id);
  await sameMillisecond('svc_developer_keys', made);
  const walked: string[] = [];
  for await (const key of client.credentials.list.all({ query: { limit: 1 } })) walked.push(key.credential_id);
  t.deepEqual(walked, [...made].reverse());
});

test("everyone's requests: the operator asks with everyone (or its old name all_requests); anyone else is 403 everyone_view_not_allowed", async (t) => {
  const alice = await signInAgent(svc);
  const bob = await signInAgent(svc);
  const mine = (await alice.client.requests.feature({ body: feature('an operator view') })).request_id;
  const refused = async (query: Record<string, string>) => {
    const response = await fetch(`${svc.baseUrl}/v1/request-status?${new URLSearchParams(query)}`, {
      headers: { authorization: `Bearer ${bob.session.accessToken}` },
    });
    return { status: response.status, code: ((await response.json()) as { code?: string }).code };
  };
  t.deepEqual(await refused({ everyone: 'true' }), { status: 403, code: 'everyone_view_not_allowed' });
  t.deepEqual(await refused({ all_requests: '1' }), { status: 403, code: 'everyone_view_not_allowed' });
  // Not asking, or asking for no, is the caller's own list.
  t.deepEqual((await bob.client.requests.status({ query: { everyone: false } })).data, []);
  t.deepEqual((await bob.client.requests.status()).data, []);
  // The operator sees Alice's request only when asking: its own list is its own rows.
  const ids = async (query: { everyone?: boolean; all_requests?: boolean }) =>
    (await svc.operator.requests.status({ query: { ...query, limit: 100 } })).data.map((entry) => entry.request_id);
  t.true((await ids({ everyone: true })).includes(mine));
  t.true((await ids({ all_requests: true })).includes(mine));
  t.false((await ids({})).includes(mine));
});

test('the operator view holds for an MCP tool call as for REST: requests_status with everyone is refused to an agent, served to the operator', async (t) => {
  const alice = await signInAgent(svc);
  const mine = (await alice.client.requests.feature({ body: feature('an operator view over MCP') })).request_id;
  const call = async (token: string, args: Record<string, unknown>) => {
    const mcp = new McpClient({ name: 'svc-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(urlFor(svc.server.urls(), mcpContract.endpoint)), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      return await mcp.callTool({ name: 'requests_status', arguments: args });
    } finally {
      await mcp.close();
    }
  };
  const bob = await signInAgent(svc);
  for (const args of [{ everyone: true }, { all_requests: true }]) {
    const refused = await call(bob.session.accessToken, args);
    t.true(refused.isError);
    t.is((refused.structuredContent as { code?: string }).code, 'everyone_view_not_allowed');
  }
  const served = await call(svc.operatorToken, { everyone: true, limit: 100 });
  t.falsy(served.isError);
  t.true((served.structuredContent as { data: { request_id: string }[] }).data.some((entry) => entry.request_id === mine));
});
