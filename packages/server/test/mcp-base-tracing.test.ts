import { randomBytes } from 'node:crypto';
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startFakeOtlpCollector } from '@svc/testing/fake-otlp-collector';
import { killAllServerProcesses, startServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';

/**
 * With tracing on, a tool call's route, run in process without an HTTP request (http/dispatch.ts),
 * still has its own request span, as it had when the dispatch synthesized an HTTP request: named
 * after the route, with its status and principal.
 */
const TOKEN = 'mcp-base-tracing-operator-token-0123456789';
const SERVER = 2;
let database: TestDatabase;

test.before(async () => {
  database = await createTestDatabase();
});
test.after.always(async () => {
  killAllServerProcesses();
  await database?.drop();
});

test('a tool call served in process has the request span of its route beside the /mcp request span', async (t) => {
  const collector = await startFakeOtlpCollector();
  t.teardown(() => collector.close());
  const server = await startServerProcess(database, {
    SVC_OPERATOR_TOKEN: TOKEN,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '600000',
  });
  const traceId = randomBytes(16).toString('hex');
  const client = new Client({ name: 'tracing', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}`, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } },
    }),
  );
  const result = await client.callTool({
    name: 'inference_rerank',
    arguments: { query: 'postgres replication', documents: ['a cake', 'postgres streaming replication'] },
  });
  t.falsy(result.isError, JSON.stringify(result));
  await client.close();
  await server.stop();

  const servers = collector.spans.filter((span) => span.kind === SERVER);
  const mcp = servers.find((span) => span.traceId === traceId && span.name === 'POST /mcp');
  t.truthy(mcp, `no /mcp span among ${JSON.stringify(servers.map((span) => span.name))}`);
  const route = servers.find((span) => span.name === 'POST /v1/rerank');
  t.truthy(route, `no span of the tool's route among ${JSON.stringify(servers.map((span) => span.name))}`);
  t.like(route!.attributes, { 'http.route': '/v1/rerank', 'http.response.status_code': 200, 'svc.principal.kind': 'operator' });
});
