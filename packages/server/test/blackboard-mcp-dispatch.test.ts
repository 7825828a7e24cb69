import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The /api/mcp blackboard tool runs each op as its REST route through the dispatcher (DESIGN:
 * "the dispatcher is the only way in"), not by calling the service beside the routes: the route's
 * request is what the server counts, with the route's status, and its refusals are the route's.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

/** The request counts of the blackboard's REST routes in the operator's Prometheus text. */
async function routeCounts(): Promise<Map<string, number>> {
  const text = await (await fetch(`${svc.baseUrl}/v1/metrics`, { headers: { authorization: `Bearer ${svc.operatorToken}` } })).text();
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^svc_http_requests_total\{route="([^"]*blackboard[^"]*)",method="(\w+)",status="(\d+)"\} (\d+)$/gm))
    counts.set(`${match[2]} ${match[1]} ${match[3]}`, Number(match[4]));
  return counts;
}

test('each op of the MCP tool is a request of its REST route, with the route status, and refusals are the route', async (t) => {
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.apiUrl}/api/mcp`)));
  try {
    const before = await routeCounts();
    const put = await client.callTool({ name: 'blackboard', arguments: { op: 'put', key: 'mcp:dispatch', value: { text: 'through the route' } } });
    t.falsy(put.isError, JSON.stringify(put.content));
    const read = await client.callTool({ name: 'blackboard', arguments: { op: 'get', key: 'mcp:dispatch' } });
    t.falsy(read.isError);
    t.is((read.structuredContent as { items: Array<{ item: { text: string } }> }).items[0]!.item.text, 'through the route');
    const wrongToken = await client.callTool({
      name: 'blackboard',
      arguments: { op: 'tombstone', id: (put.structuredContent as { id: string }).id, edit_token: `bbt_${'x'.repeat(43)}` },
    });
    t.true(wrongToken.isError);
    const after = await routeCounts();
    const grew = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    const routes = [...after.keys()].join('\n');
    t.is(grew('POST blackboard.put 201'), 1, routes);
    t.is(grew('POST blackboard.getPost 200'), 1, routes);
    t.is(grew('POST blackboard.tombstone 403'), 1, routes);
  } finally {
    await client.close();
  }
});
