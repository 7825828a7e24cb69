import type { IncomingHttpHeaders } from 'node:http';
import test from 'ava';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { newWebhookSecret } from '../src/outbound/standard-webhooks.ts';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';

/**
 * A background response whose runner died (its `svc-server` killed with SIGKILL) is ended
 * `failed` with `task_runner_lost` by another replica's backstop, and that replica sends its
 * `response.failed` webhook. The reap statement decides who sends: on PostgreSQL two replicas
 * reap the same dead runner's responses, and each response is announced exactly once. (On the
 * embedded database one process owns the data, so the next one alone reaps.)
 */
const TOKEN = 'responses-lost-operator-token-0123456789';
const COUNT = 3;
const certificate = selfSignedCertificate(['hooks.test']);
const secret = newWebhookSecret();
const received: Array<{ body: string; headers: IncomingHttpHeaders }> = [];
let database: TestDatabase;
let fake: FakeUpstream;
let receiver: HttpsSource;
let killed: ServerProcess | undefined;
const replicas: TestServer[] = [];

test.before(async () => {
  database = await createTestDatabase();
  fake = await startFakeOpenAiUpstream();
  receiver = await startHttpsSource(certificate, {
    '/hook': (request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        received.push({ body, headers: request.headers });
        response.writeHead(200).end();
      });
    },
  });
});
test.after.always(async () => {
  await killed?.stop().catch(() => undefined);
  killAllServerProcesses();
  for (const replica of replicas) await replica.close().catch(() => undefined);
  await fake?.close();
  await receiver?.close();
  await database?.drop();
});

const env = {
  SVC_OPERATOR_TOKEN: TOKEN,
  SVC_UPSTREAM_MODELS: 'slow-a',
  SVC_TASKS_LEASE_SECONDS: '2',
  SVC_TASKS_BACKSTOP_MS: '200',
};
const startReplica = async () => {
  const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
  const replica = await startTestServer({
    database,
    env: {
      ...env,
      SVC_UPSTREAM_BASE_URL: fake.baseUrl,
      SVC_RESPONSES_WEBHOOK_URL: `https://hooks.test:${receiver.port}/hook`,
      SVC_RESPONSES_WEBHOOK_SECRET: secret,
    },
    testSeams: { webhookFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
  });
  replicas.push(replica);
  return replica;
};
const clientOf = (baseUrl: string) => new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: TOKEN, maxRetries: 0, webhookSecret: secret });

test(`${COUNT} background responses of a server killed with SIGKILL: each gets one response.failed webhook, from the replica that reaped it`, async (t) => {
  killed = await startServerProcess(database, { ...env, SVC_UPSTREAM_BASE_URL: fake.baseUrl });
  const ids: string[] = [];
  for (let index = 0; index < COUNT; index++)
    ids.push((await clientOf(killed.baseUrl).responses.create({ model: 'slow-a', input: `Count slowly ${index}.`, background: true })).id);
  await killed.kill();
  // Two replicas race to reap the same expired leases on PostgreSQL; one on the embedded database.
  const [first] = await Promise.all(database.kind === 'postgres' ? [startReplica(), startReplica()] : [startReplica()]);
  for (const id of ids) {
    const delivery = await waitUntil(
      () => `a webhook for ${id}`,
      () => received.find((entry) => entry.body.includes(id)),
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    const event = await clientOf(first!.baseUrl).webhooks.unwrap(delivery.body, delivery.headers as Record<string, string>);
    if (event.type !== 'response.failed') return t.fail(`got ${event.type}`);
    t.is(event.data.id, id);
    const response = await clientOf(first!.baseUrl).responses.retrieve(id);
    t.is(response.error?.code as string | undefined, 'task_runner_lost');
  }
  // Several backstop turns of every replica later, still one event and one delivery row a response.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  for (const id of ids) t.is(received.filter((entry) => entry.body.includes(id)).length, 1, `one webhook for ${id}`);
  const rows = await first!.server.deps.database.sequelize.query<{ response_id: string; event_type: string; status: string }>(
    'SELECT response_id, event_type, status FROM svc_webhook_deliveries ORDER BY response_id',
    { type: QueryTypes.SELECT },
  );
  t.deepEqual(
    rows,
    [...ids].sort().map((id) => ({ response_id: id, event_type: 'response.failed', status: 'delivered' })),
  );
});
