import test from 'ava';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { contract, credentialsContract, currentToolName, developerKeysContract, formerContractKeys, mcpContract, toolNameOf, urlFor } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { signInAgent } from '@svc/testing/identity';

/**
 * The contract key `credentials` became `developerKeys` (docs/contributing.md, "Names"). What was
 * derived from the former name keeps working: the client's `credentials` and
 * `withResponse.credentials`, and the former MCP tool names on a call; `tools/list` and OpenAPI
 * show each operation once, under its current name.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

test('the contract has the current key only, and a former tool name maps to the current one', (t) => {
  t.deepEqual(formerContractKeys, { credentials: 'developerKeys' });
  t.true('developerKeys' in contract);
  t.false('credentials' in contract);
  t.is(currentToolName('credentials_update'), 'developer_keys_update');
  t.is(currentToolName('developer_keys_update'), 'developer_keys_update');
  t.is(currentToolName('jobs_get'), 'jobs_get');
  t.is(toolNameOf('developerKeys.list'), 'developer_keys_list');
  t.is(contract.developerKeys, developerKeysContract, 'the contract object has the key name too');
  t.is(credentialsContract, developerKeysContract, 'its former export still names it');
});

test('the client answers to the former name: the same methods, the same keys', async (t) => {
  const { client } = await signInAgent(svc, 'models:read');
  t.is(client.credentials, client.developerKeys);
  const created = await client.credentials.create({ body: { name: 'former', scopes: ['models:read'] } });
  const listed = await client.developerKeys.list();
  t.deepEqual(
    listed.data.map((key) => key.credential_id),
    [created.credential.credential_id],
  );
  const { data, response } = await client.withResponse.credentials.list();
  t.is(response.status, 200);
  t.deepEqual(data, listed);
  const rotated = await client.developerKeys.rotate({ params: { credential_id: created.credential.credential_id } });
  t.is((await client.credentials.list()).data[0]!.credential_id, rotated.credential.credential_id);
});

test('MCP: tools/list names each key tool once, under its current name; a call by the former name runs the same tool', async (t) => {
  const { session, client } = await signInAgent(svc, 'models:read billing:read');
  const key = await client.developerKeys.create({ body: { name: 'mcp', scopes: ['models:read'] } });
  const mcp = new McpClient({ name: 'svc-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(urlFor(svc.server.urls(), mcpContract.endpoint)), {
      requestInit: { headers: { authorization: `Bearer ${session.accessToken}` } },
    }),
  );
  try {
    const { tools } = await mcp.listTools();
    const names = tools.map((tool) => tool.name);
    t.true(names.includes('developer_keys_update'), names.join(' '));
    t.deepEqual(
      names.filter((name) => name.startsWith('credentials_')),
      [],
    );
    t.is(new Set(names).size, names.length, 'no tool is listed twice');

    const limits = { limits: { requests_per_minute: 7 } };
    for (const name of ['credentials_update', 'developer_keys_update']) {
      const called = await mcp.callTool({ name, arguments: { credential_id: key.credential.credential_id, ...limits } });
      t.falsy(called.isError, `${name}: ${JSON.stringify(called.content)}`);
      t.is((called.structuredContent as { limits?: { requests_per_minute?: number } }).limits?.requests_per_minute, 7, name);
    }
    const unknown = await mcp.callTool({ name: 'credentials_nonexistent', arguments: {} }).catch((error: Error) => error);
    t.true(
      unknown instanceof Error ? /credentials_nonexistent|Unknown tool/.test(unknown.message) : unknown.isError === true,
      'a former prefix with no tool behind it is still unknown',
    );
  } finally {
    await mcp.close();
  }
});

test("OpenAPI names the operations and their tag by the current name, on the spec's paths", async (t) => {
  type Operation = { operationId?: string; tags?: string[] };
  const response = await fetch(`${svc.baseUrl}/openapi.json`);
  t.is(response.status, 200, await response.clone().text());
  const document = (await response.json()) as { paths: Record<string, Record<string, Operation>> };
  t.is(document.paths['/v1/developer/credentials']!.get!.operationId, 'developerKeys.list');
  t.is(document.paths['/v1/developer/credentials']!.post!.operationId, 'developerKeys.create');
  const keyOperations = Object.values(document.paths).flatMap((methods) =>
    Object.values(methods).filter((operation) => operation.operationId?.startsWith('developerKeys.')),
  );
  t.true(keyOperations.length >= 7);
  for (const operation of keyOperations) t.deepEqual(operation.tags, ['developer-keys'], operation.operationId);
  t.false(JSON.stringify(document).includes('"credentials"'), 'no tag or name says credentials for them');
});
