import type { IncomingHttpHeaders } from 'node:http';
import test from 'ava';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { postPublicHttps } from '../src/outbound/post-public-https.ts';
import { newWebhookSecret } from '../src/outbound/standard-webhooks.ts';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';

/**
 * Webhooks for finished background responses: the operator's endpoint gets OpenAI's events,
 * signed as Standard Webhooks, which `openai`'s `client.webhooks.unwrap` verifies; a refused
 * delivery is retried with backoff and every attempt is recorded; the endpoint passes the PDF URL
 * fetch's address rules (the receiver on loopback is allowed only by the test seam).
 */
const certificate = selfSignedCertificate(['hooks.test']);
const secret = newWebhookSecret();
const received: Array<{ body: string; headers: IncomingHttpHeaders }> = [];
let refuseNext = 0;
/** When each request reached the receiver (ms, monotonic), refused or not, and for which response. */
const arrivals: Array<{ at: number; body: string }> = [];
let receiver: HttpsSource;
let fake: FakeUpstream;
let svc: TestServer;

test.before(async () => {
  receiver = await startHttpsSource(certificate, {
    '/hook': (request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        arrivals.push({ at: performance.now(), body });
        if (refuseNext > 0) {
          refuseNext--;
          response.writeHead(503).end();
          return;
        }
        received.push({ body, headers: request.headers });
        response.writeHead(200).end();
      });
    },
  });
  fake = await startFakeOpenAiUpstream({ chunkDelayMs: 10 });
  const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
  svc = await startTestServer({
    env: {
      SVC_UPSTREAM_BASE_URL: fake.baseUrl,
      SVC_UPSTREAM_MODELS: 'answer-a,slow-a,midstream-error-a',
      SVC_RESPONSES_WEBHOOK_URL: `https://hooks.test:${receiver.port}/hook`,
      SVC_RESPONSES_WEBHOOK_SECRET: secret,
      SVC_RESPONSES_WEBHOOK_RETRY_BASE_MS: '50',
    },
    testSeams: { webhookFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
  });
});
test.after.always(async () => {
  await svc?.close();
  await fake?.close();
  await receiver?.close();
});

const openai = () => new OpenAI({ baseURL: `${svc.baseUrl}/v1`, apiKey: svc.operatorToken, maxRetries: 0, webhookSecret: secret });

async function eventFor(responseId: string) {
  const delivery = await waitUntil(
    () => `a delivery for ${responseId}`,
    () => received.find((entry) => entry.body.includes(responseId)),
    { timeoutMs: 30_000, intervalMs: 20 },
  );
  return openai().webhooks.unwrap(delivery.body, delivery.headers as Record<string, string>);
}

test.serial(
  'a background response that completes is announced as response.completed, verified by webhooks.unwrap, after a refused first attempt',
  async (t) => {
    refuseNext = 1;
    const created = await openai().responses.create({ model: 'answer-a', input: 'Say hello.', background: true });
    const event = await eventFor(created.id);
    if (event.type !== 'response.completed') return t.fail(`got ${event.type}`);
    t.is(event.data.id, created.id);
    // The receiver has the body before the server reads its answer and records the attempt.
    const row = await waitUntil(
      () => `the delivery of ${created.id} recorded`,
      async () => {
        const [found] = await svc.server.deps.database.sequelize.query<{ status: string; attempts: number; last_status: number }>(
          'SELECT status, attempts, last_status FROM svc_webhook_deliveries WHERE response_id = :id',
          { replacements: { id: created.id }, type: QueryTypes.SELECT },
        );
        return found?.status !== 'pending' && found;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    t.like(row, { status: 'delivered', attempts: 2, last_status: 200 });
  },
);

test.serial('a delivery refused 4 times is retried with exponential backoff (base 50 ms: 50, 100, 200, 400 ms at least), then delivered', async (t) => {
  refuseNext = 4;
  const created = await openai().responses.create({ model: 'answer-a', input: 'Say hello, eventually.', background: true });
  await eventFor(created.id);
  const times = arrivals.filter((entry) => entry.body.includes(created.id)).map((entry) => entry.at);
  t.is(times.length, 5);
  const gaps = times.slice(1).map((at, index) => at - times[index]!);
  t.log(`gaps between attempts: ${gaps.map((gap) => Math.round(gap)).join(', ')} ms`);
  // Lower bounds only: a loaded machine lengthens the waits, it never shortens them.
  gaps.forEach((gap, index) => t.true(gap >= 50 * 2 ** index - 5, `gap ${index + 1}: ${gap} ms`));
});

test.serial('a cancelled background response is announced as response.cancelled', async (t) => {
  const created = await openai().responses.create({ model: 'slow-a', input: 'Count slowly.', background: true });
  await openai().responses.cancel(created.id);
  const event = await eventFor(created.id);
  t.is(event.type, 'response.cancelled');
});

// The two other ends of issue 43's four: an upstream that fails once the run started, and an
// answer cut by max_output_tokens (the built-in engine stops at the cap with finish_reason length).
test.serial('a background response whose upstream fails mid-run is announced as response.failed, with its error', async (t) => {
  const created = await openai().responses.create({ model: 'midstream-error-a', input: 'Say hello.', background: true });
  const event = await eventFor(created.id);
  if (event.type !== 'response.failed') return t.fail(`got ${event.type}`);
  // Read at once: the delivery is written in the transaction that stores the end (responses/background.ts).
  const ended = await openai().responses.retrieve(created.id);
  t.is(ended.status, 'failed');
  t.truthy(ended.error?.code);
});

test.serial('a background response cut by max_output_tokens is announced as response.incomplete', async (t) => {
  const created = await openai().responses.create({
    model: 'svc-extractive-chat',
    input: 'How do background responses, webhooks and the durable task store work in svc?',
    max_output_tokens: 16,
    background: true,
  });
  const event = await eventFor(created.id);
  if (event.type !== 'response.incomplete') return t.fail(`got ${event.type}`);
  // Read at once: the delivery is written in the transaction that stores the end (responses/background.ts).
  const ended = await openai().responses.retrieve(created.id);
  t.like(ended, { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
});

test.serial('a signature under another secret is refused by webhooks.unwrap', async (t) => {
  const created = await openai().responses.create({ model: 'answer-a', input: 'Say hello.', background: true });
  const delivery = await waitUntil(
    () => 'the delivery',
    () => received.find((entry) => entry.body.includes(created.id)),
    { timeoutMs: 30_000, intervalMs: 20 },
  );
  const other = new OpenAI({ apiKey: 'unused', webhookSecret: newWebhookSecret() });
  await t.throwsAsync(other.webhooks.unwrap(delivery.body, delivery.headers as Record<string, string>));
});

test.serial("GET /v1/webhooks/deliveries: the operator reads every one newest first, by page; an agent not the operator endpoint's", async (t) => {
  refuseNext = 1;
  const created = await openai().responses.create({ model: 'answer-a', input: 'Say hello once more.', background: true });
  await eventFor(created.id);
  // The receiver has the body before the server reads its answer and records the attempt.
  const page = await waitUntil(
    () => `the delivery of ${created.id} recorded`,
    async () => {
      const first = await svc.operator.responses.webhookDeliveries({ query: { limit: 1 } });
      return first.data[0]?.status !== 'pending' && first;
    },
    { timeoutMs: 10_000, intervalMs: 20 },
  );
  t.is(page.data.length, 1);
  t.true(page.has_more);
  t.like(page.data[0], { response_id: created.id, event_type: 'response.completed', status: 'delivered', attempts: 2, last_status: 200 });
  t.truthy(page.data[0]!.delivered_at);
  t.false('payload' in page.data[0]! || 'url' in page.data[0]!);
  const walked: string[] = [];
  for await (const delivery of svc.operator.responses.webhookDeliveries.all({ query: { limit: 1 } })) walked.push(delivery.response_id);
  const [rows] = await svc.server.deps.database.sequelize.query('SELECT count(*)::int AS n FROM svc_webhook_deliveries');
  t.is(walked.length, (rows[0] as { n: number }).n);
  t.is(new Set(walked).size, walked.length);
  t.is(walked[0], created.id);
  // An agent reads only the deliveries to its keys' own endpoints (responses-key-webhooks.test.ts): none of these.
  const agent = await signInAgent(svc);
  t.deepEqual((await agent.client.responses.webhookDeliveries()).data, []);
});

test('the destination passes the PDF URL rules: a loopback receiver without the seam is refused before any connection', async (t) => {
  const before = receiver.connections;
  await t.throwsAsync(postPublicHttps(`https://127.0.0.1:${receiver.port}/hook`, '{}', {}, { timeoutMs: 2000 }), { message: /not public unicast/ });
  const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
  await t.throwsAsync(postPublicHttps(`https://hooks.test:${receiver.port}/hook`, '{}', {}, { timeoutMs: 2000 }, { lookup }), {
    message: /not public unicast/,
  });
  t.is(receiver.connections, before);
});
