import type { IncomingHttpHeaders } from 'node:http';
import test from 'ava';
import OpenAI from 'openai';
import { QueryTypes } from 'sequelize';
import type { SvcClient } from '@svc/client';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { newWebhookSecret } from '../src/outbound/standard-webhooks.ts';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';

/**
 * A developer key's own webhook endpoint (issue 43): `PUT /v1/developer/credentials/{id}/webhook`
 * answers a secret once; the key's background responses are announced there, signed with that
 * secret (`openai`'s `client.webhooks.unwrap` verifies them, and refuses them under the
 * operator's), retried and recorded like the operator's deliveries; the operator's endpoint gets
 * them too. The URL passes the PDF URL fetch's rules when set (422 `source_url_refused`).
 */
const certificate = selfSignedCertificate(['hooks.test', 'private.test']);
const operatorSecret = newWebhookSecret();
type Received = { body: string; headers: IncomingHttpHeaders };
const received: Record<'operator' | 'key' | 'other', Received[]> = { operator: [], key: [], other: [] };
let refuseNextKey = 0;
let receiver: HttpsSource;
let fake: FakeUpstream;
let svc: TestServer;

const receive =
  (into: Received[], refuse: () => boolean): Parameters<typeof startHttpsSource>[1][string] =>
  (request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      if (refuse()) return void response.writeHead(503).end();
      into.push({ body, headers: request.headers });
      response.writeHead(200).end();
    });
  };

test.before(async () => {
  receiver = await startHttpsSource(certificate, {
    '/operator': receive(received.operator, () => false),
    '/key': receive(received.key, () => refuseNextKey-- > 0),
    '/other': receive(received.other, () => false),
  });
  fake = await startFakeOpenAiUpstream({ chunkDelayMs: 10 });
  // hooks.test is the receiver on loopback (the seam exempts exactly that address); private.test a private address.
  const lookup = async (host: string) => [{ address: host === 'private.test' ? '10.0.0.7' : '127.0.0.1', family: 4 }];
  svc = await startTestServer({
    env: {
      SVC_UPSTREAM_BASE_URL: fake.baseUrl,
      SVC_UPSTREAM_MODELS: 'answer-a,slow-a',
      SVC_RESPONSES_WEBHOOK_URL: `https://hooks.test:${receiver.port}/operator`,
      SVC_RESPONSES_WEBHOOK_SECRET: operatorSecret,
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

const openai = (apiKey: string) => new OpenAI({ baseURL: `${svc.baseUrl}/v1`, apiKey, maxRetries: 0 });
const hookUrl = (path: string) => `https://hooks.test:${receiver.port}${path}`;

async function deliveryFor(into: Received[], responseId: string): Promise<Received> {
  return waitUntil(
    () => `a delivery for ${responseId}`,
    () => into.find((entry) => entry.body.includes(responseId)),
    { timeoutMs: 30_000, intervalMs: 20 },
  );
}

const unwrap = (delivery: Received, secret: string) =>
  new OpenAI({ apiKey: 'unused', webhookSecret: secret }).webhooks.unwrap(delivery.body, delivery.headers as Record<string, string>);

/** The deliveries recorded for a response, once none is pending. */
async function recorded(responseId: string) {
  return waitUntil(
    () => `the deliveries of ${responseId} recorded`,
    async () => {
      const rows = await svc.server.deps.database.sequelize.query<{ credential_id: string | null; status: string; attempts: number; last_status: number }>(
        'SELECT credential_id, status, attempts, last_status FROM svc_webhook_deliveries WHERE response_id = :id ORDER BY credential_id NULLS FIRST',
        { replacements: { id: responseId }, type: QueryTypes.SELECT },
      );
      return rows.length > 0 && rows.every((row) => row.status !== 'pending') && rows;
    },
    { timeoutMs: 10_000, intervalMs: 20 },
  );
}

async function errorOf(call: Promise<unknown>): Promise<{ status?: number; code?: string }> {
  try {
    await call;
  } catch (error) {
    return error as { status?: number; code?: string };
  }
  throw new Error('the call succeeded');
}

async function agentWithKey(): Promise<{ agent: SvcClient; keyId: string; secret: string }> {
  const { client: agent } = await signInAgent(svc);
  const key = await createKey(agent, ['inference:invoke']);
  return { agent, keyId: key.credential.credential_id, secret: key.secret };
}

test.serial("a key's background response is announced at the key's endpoint, signed with its own secret, after a refused attempt", async (t) => {
  const { agent, keyId, secret } = await agentWithKey();
  const set = await agent.developerKeys.setWebhook({ params: { credential_id: keyId }, body: { url: hookUrl('/key') } });
  t.like(set, { object: 'developer_key.webhook', credential_id: keyId, url: hookUrl('/key') });
  t.regex(set.secret, /^whsec_/);
  refuseNextKey = 1;
  const created = await openai(secret).responses.create({ model: 'answer-a', input: 'Say hello.', background: true });
  const event = await unwrap(await deliveryFor(received.key, created.id), set.secret);
  if (event.type !== 'response.completed') return t.fail(`got ${event.type}`);
  t.is(event.data.id, created.id);
  // Not under the operator's secret: each endpoint is signed with its own.
  await t.throwsAsync(unwrap(await deliveryFor(received.key, created.id), operatorSecret));
  // The operator's endpoint gets it as well, under the operator's secret.
  t.is((await unwrap(await deliveryFor(received.operator, created.id), operatorSecret)).type, 'response.completed');
  const rows = await recorded(created.id);
  t.like(rows, [
    { credential_id: null, status: 'delivered', attempts: 1 },
    { credential_id: keyId, status: 'delivered', attempts: 2, last_status: 200 },
  ]);
  // The operator's list names the key of each delivery to a key's endpoint.
  const listed = [];
  for await (const delivery of svc.operator.responses.webhookDeliveries.all({ query: { limit: 10 } }))
    if (delivery.response_id === created.id) listed.push(delivery.credential_id);
  t.deepEqual(listed.sort(), [keyId, null].sort());
  // The owner reads its keys' deliveries (never the operator endpoint's), all or one key's; another agent none of them.
  const mine = await agent.responses.webhookDeliveries({ query: { limit: 100 } });
  t.true(mine.data.length > 0 && mine.data.every((delivery) => delivery.credential_id === keyId));
  t.like(
    mine.data.find((delivery) => delivery.response_id === created.id),
    { status: 'delivered', attempts: 2, last_status: 200 },
  );
  t.is((await agent.responses.webhookDeliveries({ query: { credential_id: keyId } })).data.length, mine.data.length);
  const { client: stranger } = await signInAgent(svc);
  t.deepEqual((await stranger.responses.webhookDeliveries({ query: { credential_id: keyId } })).data, []);
  // The endpoint is read back without its secret.
  const read = await agent.developerKeys.webhook({ params: { credential_id: keyId } });
  t.deepEqual(read, { object: 'developer_key.webhook', credential_id: keyId, url: hookUrl('/key'), created_at: set.created_at });
});

test.serial('a cancelled background response of the key is announced there as response.cancelled', async (t) => {
  const { agent, keyId, secret } = await agentWithKey();
  const set = await agent.developerKeys.setWebhook({ params: { credential_id: keyId }, body: { url: hookUrl('/key') } });
  const created = await openai(secret).responses.create({ model: 'slow-a', input: 'Count slowly.', background: true });
  await openai(secret).responses.cancel(created.id);
  t.is((await unwrap(await deliveryFor(received.key, created.id), set.secret)).type, 'response.cancelled');
});

test.serial('setting the endpoint again moves it and makes a new secret; the old secret no longer verifies', async (t) => {
  const { agent, keyId, secret } = await agentWithKey();
  const first = await agent.developerKeys.setWebhook({ params: { credential_id: keyId }, body: { url: hookUrl('/key') } });
  const second = await agent.developerKeys.setWebhook({ params: { credential_id: keyId }, body: { url: hookUrl('/other') } });
  t.not(second.secret, first.secret);
  const created = await openai(secret).responses.create({ model: 'answer-a', input: 'Say hello.', background: true });
  const delivery = await deliveryFor(received.other, created.id);
  t.is((await unwrap(delivery, second.secret)).type, 'response.completed');
  await t.throwsAsync(unwrap(delivery, first.secret));
  t.false(received.key.some((entry) => entry.body.includes(created.id)));
});

test.serial("a rotated key's successor keeps the endpoint; once removed, the key's responses go to the operator's endpoint only", async (t) => {
  const { agent, keyId } = await agentWithKey();
  const set = await agent.developerKeys.setWebhook({ params: { credential_id: keyId }, body: { url: hookUrl('/key') } });
  const rotated = await agent.developerKeys.rotate({ params: { credential_id: keyId } });
  const successor = rotated.credential.credential_id;
  t.is((await agent.developerKeys.webhook({ params: { credential_id: successor } })).url, hookUrl('/key'));
  const created = await openai(rotated.secret).responses.create({ model: 'answer-a', input: 'Say hello.', background: true });
  t.is((await unwrap(await deliveryFor(received.key, created.id), set.secret)).type, 'response.completed');

  t.like(await agent.developerKeys.removeWebhook({ params: { credential_id: successor } }), { credential_id: successor, deleted: true });
  t.like(await agent.developerKeys.removeWebhook({ params: { credential_id: successor } }), { deleted: false });
  t.like(await errorOf(agent.developerKeys.webhook({ params: { credential_id: successor } })), { status: 404, code: 'key_webhook_not_found' });
  const after = await openai(rotated.secret).responses.create({ model: 'answer-a', input: 'Say hello.', background: true });
  await deliveryFor(received.operator, after.id);
  // Both deliveries are written together when the response ends: the operator's alone means none to the key.
  t.like(await recorded(after.id), [{ credential_id: null, status: 'delivered' }]);
  t.is((await recorded(after.id)).length, 1);
});

test('the URL passes the PDF URL rules when set (422 source_url_refused), and nothing is stored', async (t) => {
  const { agent, keyId } = await agentWithKey();
  const set = (url: string) => errorOf(agent.developerKeys.setWebhook({ params: { credential_id: keyId }, body: { url } }));
  t.like(await set('https://10.0.0.1/hook'), { status: 422, code: 'source_url_refused' });
  t.like(await set('https://[::1]/hook'), { status: 422, code: 'source_url_refused' });
  t.like(await set(`https://private.test:${receiver.port}/hook`), { status: 422, code: 'source_url_refused' });
  t.like(await set(`http://hooks.test:${receiver.port}/hook`), { status: 422 });
  t.like(await errorOf(agent.developerKeys.webhook({ params: { credential_id: keyId } })), { status: 404, code: 'key_webhook_not_found' });
});

test("another agent's key (404) and a revoked key (409) are refused", async (t) => {
  const { agent, keyId } = await agentWithKey();
  const { client: stranger } = await signInAgent(svc);
  const body = { url: hookUrl('/key') };
  t.like(await errorOf(stranger.developerKeys.setWebhook({ params: { credential_id: keyId }, body })), { status: 404, code: 'credential_not_found' });
  t.like(await errorOf(stranger.developerKeys.webhook({ params: { credential_id: keyId } })), { status: 404, code: 'credential_not_found' });
  t.like(await errorOf(stranger.developerKeys.removeWebhook({ params: { credential_id: keyId } })), { status: 404, code: 'credential_not_found' });
  const wide = await createKey(agent, ['inference:invoke']);
  await agent.developerKeys.revoke({ params: { credential_id: wide.credential.credential_id } });
  t.like(await errorOf(agent.developerKeys.setWebhook({ params: { credential_id: wide.credential.credential_id }, body })), {
    status: 409,
    code: 'credential_revoked',
  });
});
