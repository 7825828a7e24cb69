import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { mcpContract, urlFor } from '@svc/schemas';
import { slowJobArguments, startSlowPdfServer } from './helpers/slow-pdf-job.ts';

/**
 * MCP requires a call's progress to increase with each notification (2025-11-25 and 2026-07-28).
 * jobs_get polls the job every 250 ms; here each of the job's two PDFs takes 1.5 s to arrive, so
 * the job sits at 0 of 2 (queued, then running) for several polls. Before issue 43 each poll sent a
 * notification (0/2 queued, 0/2 running, 0/2 running, ..., 2/2 completed); now one is sent only
 * when the count grows.
 */
let slow: Awaited<ReturnType<typeof startSlowPdfServer>>;
test.before(async () => {
  slow = await startSlowPdfServer(1500);
});
test.after.always(async () => {
  await slow?.close();
});

type Progress = { progress: number; total?: number; message?: string };
type CallTool = (
  params: { name: string; arguments: Record<string, unknown> },
  options: { onprogress: (progress: Progress) => void; timeout: number },
) => Promise<{ isError?: boolean; structuredContent?: Record<string, unknown>; content?: unknown }>;

const endpoint = () => new URL(urlFor(slow.svc.server.urls(), mcpContract.endpoint));
const authorized = () => ({ requestInit: { headers: { authorization: `Bearer ${slow.svc.operatorToken}` } } });
const flavours: Array<{ label: string; connect: () => Promise<{ callTool: CallTool; close: () => Promise<void> }> }> = [
  {
    label: 'v1 SDK, 2025-11-25',
    async connect() {
      const client = new ClientV1({ name: 'progress-grows-v1', version: '1' });
      await client.connect(new TransportV1(endpoint(), authorized()));
      return { callTool: (params, options) => client.callTool(params, undefined, options) as ReturnType<CallTool>, close: () => client.close() };
    },
  },
  {
    label: 'v2 client, 2026-07-28',
    async connect() {
      const client = new ClientV2({ name: 'progress-grows-v2', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new TransportV2(endpoint(), authorized()));
      return { callTool: (params, options) => client.callTool(params, options) as ReturnType<CallTool>, close: () => client.close() };
    },
  },
];

for (const { label, connect } of flavours) {
  test.serial(`${label}: jobs_get sends a progress notification only when the count grows`, async (t) => {
    const client = await connect();
    try {
      const submitted = await client.callTool(
        {
          name: 'jobs_submit',
          arguments: slowJobArguments(slow.source, `grows-${label.replace(/\W+/g, '-')}-${Date.now()}`),
        },
        { onprogress: () => {}, timeout: 60_000 },
      );
      t.falsy(submitted.isError, JSON.stringify(submitted.content));
      const started = Date.now();
      const updates: Progress[] = [];
      const done = await client.callTool(
        { name: 'jobs_get', arguments: { job_id: submitted.structuredContent!.job_id } },
        { onprogress: (update) => updates.push(update), timeout: 60_000 },
      );
      t.is(done.structuredContent!.status, 'completed', JSON.stringify(done.structuredContent));
      t.true(Date.now() - started >= 1500, 'the job stayed at 0 of 2 over several polls');
      const values = updates.map((update) => update.progress);
      t.true(
        values.every((value, index) => index === 0 || value > values[index - 1]!),
        `each notification's progress is above the one before: ${JSON.stringify(updates)}`,
      );
      t.is(values.at(-1), 2);
      t.is(updates[0]!.total, 2);
    } finally {
      await client.close();
    }
  });
}
