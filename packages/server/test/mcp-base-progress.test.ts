import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { mcpContract, pdfContract, urlFor } from '@svc/schemas';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

type Progress = { progress: number; total?: number; message?: string };
interface ProgressClient {
  callTool(
    params: { name: string; arguments: Record<string, unknown> },
    schema?: undefined,
    options?: { onprogress?: (progress: Progress) => void; timeout?: number },
  ): Promise<{ isError?: boolean; structuredContent?: Record<string, unknown>; content?: unknown }>;
  close(): Promise<void>;
}

const authorized = () => ({ requestInit: { headers: { authorization: `Bearer ${svc.operatorToken}` } } });
const flavours: Array<{ label: string; connect: () => Promise<ProgressClient> }> = [
  {
    label: 'v1 SDK, 2025-11-25',
    async connect() {
      const client = new ClientV1({ name: 'progress-v1', version: '1' });
      await client.connect(new TransportV1(new URL(urlFor(svc.server.urls(), mcpContract.endpoint)), authorized()));
      return client as unknown as ProgressClient;
    },
  },
  {
    label: 'v2 client, 2026-07-28',
    async connect() {
      const client = new ClientV2({ name: 'progress-v2', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new TransportV2(new URL(urlFor(svc.server.urls(), mcpContract.endpoint)), authorized()));
      // The v2 client's callTool takes (params, options): adapt the v1 shape the test speaks.
      return {
        callTool: (params, _schema, options) => client.callTool(params, options) as ReturnType<ProgressClient['callTool']>,
        close: () => client.close(),
      };
    },
  },
];

const withoutTimings = (value: Record<string, unknown> | undefined) => {
  const { timings_ms: _streamedOnly, ...rest } = value ?? {};
  return rest;
};

for (const { label, connect } of flavours) {
  test(`${label}: pdf_extract with a progressToken reports each page, and answers the REST extraction`, async (t) => {
    const client = await connect();
    try {
      const data = numberedPdf(5).toString('base64');
      const updates: Progress[] = [];
      const result = await client.callTool({ name: 'pdf_extract', arguments: { data_base64: data } }, undefined, {
        onprogress: (update) => updates.push(update),
      });
      t.falsy(result.isError, JSON.stringify(result.content));
      t.deepEqual(
        updates.map((update) => update.progress),
        [1, 2, 3, 4, 5],
      );
      const rest = await fetch(urlFor(svc.server.urls(), pdfContract.extract), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}` },
        body: JSON.stringify({ data_base64: data }),
      });
      // The pages and the summary are the unstreamed answer's; timings_ms is the streamed form's own field.
      t.deepEqual(withoutTimings(result.structuredContent), withoutTimings((await rest.json()) as Record<string, unknown>));
    } finally {
      await client.close();
    }
  });

  test(`${label}: jobs_get with a progressToken follows the job until it is done`, async (t) => {
    const client = await connect();
    try {
      const submitted = await client.callTool({
        name: 'jobs_submit',
        arguments: {
          body: { schema: 'svc.batch-job-request.v1', operation: 'calculate', items: [{ expression: '2^10' }, { expression: '3*7' }] },
          idempotency_key: `progress-${label.replace(/\W+/g, '-')}-${Date.now()}`,
        },
      });
      t.falsy(submitted.isError, JSON.stringify(submitted.content));
      const jobId = submitted.structuredContent!.job_id as string;
      const updates: Progress[] = [];
      const done = await client.callTool({ name: 'jobs_get', arguments: { job_id: jobId } }, undefined, {
        onprogress: (update) => updates.push(update),
        timeout: 60_000,
      });
      t.is(done.structuredContent!.status, 'completed', JSON.stringify(done.structuredContent));
      t.true(updates.length >= 1);
      // The last notification is the count's last growth: 2 of 2 (its message the status it was read in).
      t.like(updates.at(-1), { progress: 2, total: 2 });
    } finally {
      await client.close();
    }
  });
}
