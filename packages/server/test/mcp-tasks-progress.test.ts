import test from 'ava';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpContract, urlFor } from '@svc/schemas';
import { slowJobArguments, startSlowPdfServer } from './helpers/slow-pdf-job.ts';

/**
 * Progress through an MCP task (2025-11-25), with the v1 SDK's experimental tasks client,
 * unchanged: a task-augmented `tools/call` that gave a progressToken gets the task's progress as
 * `notifications/progress` with that token on its `tasks/result` stream, each above the one before
 * (MCP requires progress to grow), then the result. The task is `jobs_get` following a job of two
 * PDFs that each take 2 s to arrive, so the job sits at 0 of 2 over several of the runner's polls.
 * Before issue 43's fix, no notification reached the client at all.
 */
const PDF_DELAY_MS = 2000;
let slow: Awaited<ReturnType<typeof startSlowPdfServer>>;
test.before(async () => {
  slow = await startSlowPdfServer(PDF_DELAY_MS);
});
test.after.always(async () => {
  await slow?.close();
});

type Progress = { progress: number; total?: number; message?: string };

async function connect() {
  const client = new ClientV1({ name: 'svc-tasks-progress', version: '1.0.0' });
  await client.connect(
    new TransportV1(new URL(urlFor(slow.svc.server.urls(), mcpContract.endpoint)), {
      requestInit: { headers: { authorization: `Bearer ${slow.svc.operatorToken}` } },
    }),
  );
  return client;
}

/** A job of two slow PDFs, submitted through the plain tool; its id. */
async function slowJob(client: ClientV1, label: string): Promise<string> {
  const submitted = await client.callTool({ name: 'jobs_submit', arguments: slowJobArguments(slow.source, `tasks-progress-${label}-${Date.now()}`) });
  const jobId = (submitted.structuredContent as { job_id?: unknown } | undefined)?.job_id;
  if (submitted.isError || typeof jobId !== 'string') throw new Error(`jobs_submit failed: ${JSON.stringify(submitted.content)}`);
  return jobId;
}

const growing = (values: number[]) => values.every((value, index) => index === 0 || value > values[index - 1]!);

test.serial('callToolStream with onprogress: the task progress reaches the client, growing, before the result', async (t) => {
  const client = await connect();
  try {
    const jobId = await slowJob(client, 'stream');
    const updates: Progress[] = [];
    const kinds: string[] = [];
    let result: { structuredContent?: { status?: string }; isError?: boolean } | undefined;
    for await (const message of client.experimental.tasks.callToolStream({ name: 'jobs_get', arguments: { job_id: jobId } }, CallToolResultSchema, {
      task: { ttl: 60_000 },
      onprogress: (update) => {
        updates.push(update);
        kinds.push('progress');
      },
      timeout: 60_000,
    })) {
      kinds.push(message.type);
      if (message.type === 'result') result = message.result as typeof result;
      if (message.type === 'error') t.fail(String(message.error));
    }
    t.is(result?.structuredContent?.status, 'completed', JSON.stringify(result));
    t.true(updates.length >= 2, `progress notifications: ${JSON.stringify(updates)}`);
    t.true(growing(updates.map((update) => update.progress)), `each notification's progress is above the one before: ${JSON.stringify(updates)}`);
    t.is(updates.at(-1)!.progress, 2);
    t.is(updates[0]!.total, 2);
    t.true(kinds.lastIndexOf('progress') < kinds.indexOf('result'), kinds.join(','));
  } finally {
    await client.close();
  }
});

test.serial('tasks/result asked at once streams the progress as the task makes it, not all at its end', async (t) => {
  const client = await connect();
  try {
    const jobId = await slowJob(client, 'live');
    const updates: Array<Progress & { at: number }> = [];
    const created = await client.request(
      { method: 'tools/call', params: { name: 'jobs_get', arguments: { job_id: jobId }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
      { onprogress: (update) => updates.push({ ...update, at: performance.now() }), timeout: 60_000 },
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema, { timeout: 60_000 });
    const answeredAt = performance.now();
    t.is((result.structuredContent as { status?: string }).status, 'completed');
    t.true(growing(updates.map((update) => update.progress)), JSON.stringify(updates));
    t.is(updates.at(-1)!.progress, 2);
    // The first step (0 of 2) is kept when the runner first reads the job, while its PDFs are still on their way.
    t.true(answeredAt - updates[0]!.at >= PDF_DELAY_MS / 2, `first notification ${Math.round(answeredAt - updates[0]!.at)} ms before the result`);
  } finally {
    await client.close();
  }
});
