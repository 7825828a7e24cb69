import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'ava';
import OpenAI from 'openai';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { startFakeOtlpCollector, type CollectedSpan, type FakeOtlpCollector } from '@svc/testing/fake-otlp-collector';
import { textPdf } from '@svc/testing/pdf-fixtures';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';

/**
 * Traces, end to end: `svc-server start` as a user runs it, an OTLP/HTTP receiver standing in for
 * the collector, the fake OpenAI-compatible upstream, and the `openai` client sending a caller's
 * W3C traceparent. Spans are read after the server stopped, so they also prove the flush on
 * shutdown (the batch delay is left long enough that nothing is sent before).
 */
const TOKEN = 'tracing-otlp-operator-token-0123456789abcdef';
const UPSTREAM_KEY = 'sk-upstream-tracing-secret-5c1e0b9d';
const SERVER = 2;
const CLIENT = 3;
let database: TestDatabase;
let fake: FakeUpstream;

test.before(async () => {
  database = await createTestDatabase();
  fake = await startFakeOpenAiUpstream();
});
test.after.always(async () => {
  killAllServerProcesses();
  await fake?.close();
  await database?.drop();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

async function startSvc(env: Record<string, string>): Promise<ServerProcess> {
  return startServerProcess(database, {
    SVC_OPERATOR_TOKEN: TOKEN,
    SVC_UPSTREAM_BASE_URL: fake.baseUrl,
    SVC_UPSTREAM_API_KEY: UPSTREAM_KEY,
    SVC_UPSTREAM_MODELS: 'answer-a,broken-a',
    ...env,
  });
}

/** One chat call through the `openai` client, as a caller in a trace of its own. */
async function chatInTrace(server: ServerProcess, traceId: string, parentId: string) {
  const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: TOKEN, maxRetries: 0 });
  return client.chat.completions.create(
    { model: 'answer-a', messages: [{ role: 'user', content: 'Say hello.' }] },
    { headers: { traceparent: `00-${traceId}-${parentId}-01` } },
  );
}

const requestLines = (server: ServerProcess) =>
  server
    .output()
    .split('\n')
    .filter((line) => line.includes('"msg":"request"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test.serial('with an OTLP endpoint, a chat call and a PDF parse reach the collector as spans of the caller’s traces', async (t) => {
  const collector: FakeOtlpCollector = await startFakeOtlpCollector();
  t.teardown(() => collector.close());
  const server = await startSvc({
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '600000',
  });
  const chatTrace = hex(16);
  const callerSpan = hex(8);
  const completion = await chatInTrace(server, chatTrace, callerSpan);
  const pdfTrace = hex(16);
  const pdf = await fetch(`${server.baseUrl}/v1/pdf/extract/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/pdf', traceparent: `00-${pdfTrace}-${hex(8)}-01` },
    body: new Uint8Array(textPdf([['A traced page.']])),
  });
  t.is(pdf.status, 200);
  await pdf.arrayBuffer();
  const upstreamCall = fake.requests.at(-1)!;
  // A stream's GenAI span stays open until the stream ends, when its usage is known.
  const streamTrace = hex(16);
  const stream = await new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: TOKEN, maxRetries: 0 }).chat.completions.create(
    { model: 'answer-a', messages: [{ role: 'user', content: 'Say hello.' }], stream: true, stream_options: { include_usage: true } },
    { headers: { traceparent: `00-${streamTrace}-${hex(8)}-01` } },
  );
  let streamUsage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) streamUsage = chunk.usage ?? streamUsage;
  // An upstream that fails: the GenAI span and the request span end as errors, naming the stable code.
  const failedTrace = hex(16);
  const failed = await fetch(`${server.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', traceparent: `00-${failedTrace}-${hex(8)}-01` },
    body: JSON.stringify({ model: 'broken-a', messages: [{ role: 'user', content: 'Say hello.' }] }),
  });
  const failure = (await failed.json()) as { code: string };
  t.is(collector.spans.length, 0, 'the batch is sent when the server stops, not before');
  await server.stop();

  const inTrace = (traceId: string) => collector.spans.filter((span) => span.traceId === traceId);
  const chatSpans = inTrace(chatTrace);
  const request = chatSpans.find((span) => span.kind === SERVER)!;
  t.truthy(request, `no request span among ${JSON.stringify(chatSpans.map((span) => span.name))}`);
  t.is(request.name, 'POST /v1/chat/completions');
  t.is(request.parentSpanId, callerSpan);
  t.like(request.attributes, {
    'http.route': '/v1/chat/completions',
    'http.request.method': 'POST',
    'http.response.status_code': 200,
    'svc.principal.kind': 'operator',
  });
  t.is(request.resource['service.name'], 'svc-server');

  const model = chatSpans.find((span) => span.kind === CLIENT && span.attributes['gen_ai.operation.name'] === 'chat') as CollectedSpan;
  t.truthy(model, 'no GenAI span');
  t.is(model.name, 'chat answer-a');
  t.is(model.parentSpanId, request.spanId);
  t.like(model.attributes, {
    'gen_ai.request.model': 'answer-a',
    'gen_ai.response.model': 'answer-a',
    'gen_ai.provider.name': 'openai',
    'gen_ai.usage.input_tokens': completion.usage!.prompt_tokens,
    'gen_ai.usage.output_tokens': completion.usage!.completion_tokens!,
  });
  t.true(completion.usage!.completion_tokens! > 0);
  // The upstream got the caller's trace, as a child of the GenAI span.
  t.is(upstreamCall.traceparent, `00-${chatTrace}-${model.spanId}-01`);

  const streamed = inTrace(streamTrace).find((span) => span.attributes['gen_ai.operation.name'] === 'chat')!;
  t.like(streamed.attributes, {
    'gen_ai.usage.input_tokens': streamUsage!.prompt_tokens,
    'gen_ai.usage.output_tokens': streamUsage!.completion_tokens,
    'gen_ai.response.model': 'answer-a',
  });

  const failedSpans = inTrace(failedTrace);
  const failedCall = failedSpans.find((span) => span.name === 'chat broken-a')!;
  t.truthy(failedCall, JSON.stringify({ status: failed.status, failure, spans: failedSpans.map((span) => [span.name, span.attributes]) }));
  t.is(failedCall.statusCode, 2);
  t.is(failedCall.attributes['error.type'], failure.code);
  const failedRequest = failedSpans.find((span) => span.kind === SERVER)!;
  t.is(failedRequest.attributes['http.response.status_code'], failed.status);
  t.is(failedRequest.statusCode, failed.status >= 500 ? 2 : 0);

  const pdfSpans = inTrace(pdfTrace);
  const pdfRequest = pdfSpans.find((span) => span.kind === SERVER)!;
  t.is(pdfRequest.name, 'POST /v1/pdf/extract/upload');
  const parse = pdfSpans.find((span) => span.name === 'pdf.parse')!;
  t.truthy(parse, 'no PDF parse span');
  t.is(parse.parentSpanId, pdfRequest.spanId);
  t.is(parse.statusCode, 0);

  // The PDF route counts its caller's uploads in the database (the chat route, for the operator, does not query).
  const queries = pdfSpans.filter((span) => span.attributes['db.system.name'] === 'postgresql');
  t.true(queries.length > 0, `no query span among ${JSON.stringify(pdfSpans.map((span) => span.name))}`);
  for (const query of queries) {
    // Named by its first words only: no literal, number or placeholder, so no parameter.
    t.regex(query.name, /^[A-Za-z_][\w.]*( [A-Za-z_][\w.]*){0,3}$/);
    t.is(query.kind, CLIENT);
    t.is(query.parentSpanId, pdfRequest.spanId);
  }

  // Never a secret: neither the caller's token nor the upstream's key is in any span.
  const sent = JSON.stringify(collector.spans);
  t.false(sent.includes(TOKEN));
  t.false(sent.includes(UPSTREAM_KEY));
  // The request's log line names its trace.
  const line = requestLines(server).find((entry) => entry.route === 'inference.chat' || String(entry.route).includes('chat'));
  t.is(line?.trace_id, chatTrace);
});

test.serial('without an OTLP endpoint nothing is exported, no traceparent is passed on and log lines carry no trace id', async (t) => {
  const collector = await startFakeOtlpCollector();
  t.teardown(() => collector.close());
  const server = await startSvc({});
  const before = fake.requests.length;
  const completion = await chatInTrace(server, hex(16), hex(8));
  t.truthy(completion.choices[0]?.message.content);
  await server.stop();
  t.is(fake.requests.length, before + 1);
  t.is(fake.requests.at(-1)!.traceparent, undefined);
  t.deepEqual(collector.exports, []);
  const lines = requestLines(server);
  t.true(lines.length > 0);
  t.false(lines.some((line) => 'trace_id' in line));
});

test.serial(
  'a call retried on a sibling deployment: one GenAI span per attempt, each naming its deployment and outcome, with gen_ai.response.model',
  async (t) => {
    const collector = await startFakeOtlpCollector();
    const [first, second] = [await startFakeOpenAiUpstream(), await startFakeOpenAiUpstream()];
    t.teardown(async () => {
      await collector.close();
      await first.close();
      await second.close();
    });
    // u1 is all but always picked first (weight 1000 to 1) and answers 503 before any byte: u2 serves.
    first.setOutage({ status: 503 });
    const file = path.join(database.dataDir, 'tracing-deployments.json');
    await writeFile(
      file,
      JSON.stringify({
        upstreams: [
          { id: 'u1', base_url: first.baseUrl },
          { id: 'u2', base_url: second.baseUrl },
        ],
        models: [
          { id: 'pooled', upstream_model: 'answer-pooled', capabilities: ['chat'], deployments: [{ upstream: 'u1', weight: 1000 }, { upstream: 'u2' }] },
        ],
      }),
    );
    const server = await startSvc({
      SVC_MODELS_FILE: file,
      SVC_UPSTREAM_RETRY_BACKOFF_MS: '20',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '600000',
    });
    const traceId = hex(16);
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const completion = await client.chat.completions.create(
      { model: 'pooled', messages: [{ role: 'user', content: 'Say hello.' }] },
      { headers: { traceparent: `00-${traceId}-${hex(8)}-01` } },
    );
    t.is(completion.model, 'pooled');
    t.is(first.requests.length, 1, 'u1 was tried first');
    await server.stop();

    const spans = collector.spans.filter((span) => span.traceId === traceId);
    const request = spans.find((span) => span.kind === SERVER)!;
    const attempts = spans.filter((span) => span.kind === CLIENT && span.attributes['gen_ai.operation.name'] === 'chat');
    t.deepEqual(
      attempts.map((span) => [span.attributes['svc.engine'], span.attributes['svc.attempt'], span.statusCode]),
      [
        ['u1', 1, 2],
        ['u2', 2, 0],
      ],
      JSON.stringify(attempts.map((span) => [span.name, span.attributes])),
    );
    const [failed, served] = attempts as [CollectedSpan, CollectedSpan];
    for (const span of attempts) {
      t.is(span.parentSpanId, request.spanId, 'each attempt is a child of the request');
      t.is(span.name, 'chat answer-pooled');
      t.like(span.attributes, { 'svc.model': 'pooled', 'gen_ai.request.model': 'answer-pooled' });
    }
    t.is(failed.attributes['error.type'], 'upstream_error', 'the 503, by its stable code');
    t.false('gen_ai.response.model' in failed.attributes, 'a failed attempt answered nothing');
    t.like(served.attributes, {
      'gen_ai.response.model': 'answer-pooled',
      'gen_ai.usage.input_tokens': completion.usage!.prompt_tokens,
      'gen_ai.usage.output_tokens': completion.usage!.completion_tokens!,
    });
    // Each upstream got the trace as a child of its own attempt's span.
    t.is(first.requests[0]!.traceparent, `00-${traceId}-${failed.spanId}-01`);
    t.is(second.requests.at(-1)!.traceparent, `00-${traceId}-${served.spanId}-01`);
  },
);
