import { randomBytes } from 'node:crypto';
import test from 'ava';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { authorizationTypes } from '@x402/evm';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { wrapFetchWithPayment as wrapFetchWithPaymentV1, decodeXPaymentResponse } from 'x402-fetch';
import { ConfigError, loadConfig } from '../src/config.ts';
import { anonymousPrincipal, type ChatCompletionChunk } from '@svc/schemas';
import { runFunded } from '../src/features/billing/funding-step.ts';
import { x402Funding } from '../src/features/billing/x402-funding.ts';
import { claimAuthorization, STALE_CLAIM_SECONDS } from '../src/features/billing/x402-nonces.ts';
import type { RequestContext } from '../src/http/request-context.ts';
import { startFakeFacilitator, type FakeFacilitator } from '@svc/testing/fake-facilitator';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/** A fixed, throwaway test key (Hardhat's first account): never funded anywhere real. */
const payer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const PAY_TO = '0x1111111111111111111111111111111111111111';
const BASE_SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

let facilitator: FakeFacilitator;
let svc: TestServer;
let unconfigured: TestServer;

test.before(async () => {
  facilitator = await startFakeFacilitator();
  [svc, unconfigured] = await Promise.all([
    startTestServer({ env: { SVC_X402_PAY_TO: PAY_TO, SVC_X402_FACILITATOR_URL: facilitator.url } }),
    startTestServer(),
  ]);
});
test.after.always(async () => {
  await Promise.all([svc?.close(), unconfigured?.close()]);
  await facilitator?.close();
});

const chatBody = (content = 'How do I pay per call?', extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model: 'svc-extractive-chat', messages: [{ role: 'user', content }], ...extra });
const post = (server: TestServer, body: string, headers: Record<string, string> = {}) =>
  fetch(`${server.baseUrl}/x402/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

/** The real v2 client (@x402/fetch) paying with the test account; records the payment headers it sent. */
function v2Payer() {
  const sent: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const headers = input instanceof Request ? input.headers : new Headers(init?.headers);
    const signature = headers.get('payment-signature');
    if (signature) sent.push(signature);
    return fetch(input, init);
  };
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: payer });
  return { fetch: wrapFetchWithPayment(recording, client), sent };
}

const nonceOf = (header: string): string => JSON.parse(Buffer.from(header, 'base64').toString('utf8')).payload.authorization.nonce;
const callsWith = (nonce: string) => facilitator.calls.filter((call) => call.body.paymentPayload.payload?.authorization?.nonce === nonce);
const settlesOf = (nonce: string) =>
  facilitator.calls.filter((call) => call.path === '/settle' && call.body.paymentPayload.payload.authorization.nonce === nonce);

/** An EIP-3009 authorization signed by the payer, with any field changed: what a careless or hostile client might send. */
async function signedPayment(challenge: PaymentRequired, change: { to?: string; value?: string; validBefore?: number; validAfter?: number } = {}) {
  const accepted = challenge.accepts[0]!;
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: payer.address,
    to: (change.to ?? accepted.payTo) as `0x${string}`,
    value: change.value ?? accepted.amount,
    validAfter: String(change.validAfter ?? now - 600),
    validBefore: String(change.validBefore ?? now + accepted.maxTimeoutSeconds),
    nonce: `0x${randomBytes(32).toString('hex')}` as `0x${string}`,
  };
  const signature = await payer.signTypedData({
    domain: { name: String(accepted.extra.name), version: String(accepted.extra.version), chainId: 84532, verifyingContract: accepted.asset as `0x${string}` },
    types: authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message: {
      ...authorization,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
    },
  });
  return encodePaymentSignatureHeader({ x402Version: 2, resource: challenge.resource, accepted, payload: { signature, authorization } });
}

async function freshChallenge(): Promise<PaymentRequired> {
  const response = await post(svc, chatBody());
  return decodePaymentRequiredHeader(response.headers.get('payment-required')!);
}

test('unpaid: 402 with the v2 challenge in PAYMENT-REQUIRED, the v1 challenge as the body, and a Link', async (t) => {
  const response = await post(svc, chatBody());
  t.is(response.status, 402);
  const v2 = decodePaymentRequiredHeader(response.headers.get('payment-required')!);
  t.is(v2.x402Version, 2);
  t.is(v2.resource.url, `${svc.baseUrl}/x402/chat/completions`);
  t.deepEqual(v2.accepts, [
    {
      scheme: 'exact',
      network: 'eip155:84532',
      amount: '5000',
      asset: BASE_SEPOLIA_USDC,
      payTo: PAY_TO,
      maxTimeoutSeconds: 300,
      extra: { name: 'USDC', version: '2' },
    },
  ]);
  t.is(response.headers.get('link'), `<${svc.baseUrl}/.well-known/x402>; rel="payment"`);
  t.is(response.headers.get('cache-control'), 'no-store');
  const body = await response.json();
  t.like(body, { x402Version: 1, code: 'x402_payment_required', reason: 'payment_required' });
  t.like(body.accepts[0], {
    scheme: 'exact',
    network: 'base-sepolia',
    maxAmountRequired: '5000',
    asset: BASE_SEPOLIA_USDC,
    payTo: PAY_TO,
    resource: `${svc.baseUrl}/x402/chat/completions`,
    extra: { name: 'USDC', version: '2' },
  });
  t.regex(body.error, /5000 base units/);
  const invalid = await post(svc, JSON.stringify({ messages: [] }));
  t.is(invalid.status, 422, 'a bad body is refused before any payment is asked for');
});

test('the real @x402/fetch client (v2) pays a call end to end; the answer carries PAYMENT-RESPONSE', async (t) => {
  const { fetch: paying, sent } = v2Payer();
  const response = await paying(`${svc.baseUrl}/x402/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody() });
  t.is(response.status, 200);
  const completion = await response.json();
  t.is(completion.object, 'chat.completion');
  t.is(completion.model, 'svc-extractive-chat');
  t.true(completion.choices[0].message.content.length > 0);
  t.is(sent.length, 1);
  t.is(response.headers.get('cache-control'), 'private');
  const receipt = decodePaymentResponseHeader(response.headers.get('payment-response')!);
  t.like(receipt, { success: true, network: 'eip155:84532', payer: payer.address });
  const transfer = facilitator.transfers.find((entry) => entry.transaction === receipt.transaction)!;
  t.like(transfer, { from: payer.address, to: PAY_TO, value: 5000n });
  const verifies = facilitator.calls.filter((call) => call.path === '/verify' && call.body.paymentPayload.payload.authorization.nonce === transfer.nonce);
  t.is(verifies.length, 1);
  t.is(verifies[0]!.body.x402Version, 2);
  t.is(settlesOf(transfer.nonce).length, 1);
});

test('the legacy x402-fetch client (v1) pays with X-PAYMENT and gets X-PAYMENT-RESPONSE', async (t) => {
  const paying = wrapFetchWithPaymentV1(fetch, payer);
  const response = await paying(`${svc.baseUrl}/x402/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: chatBody('What is svc?'),
  });
  t.is(response.status, 200);
  t.is((await response.json()).object, 'chat.completion');
  t.is(response.headers.get('payment-response'), null);
  const receipt = decodeXPaymentResponse(response.headers.get('x-payment-response')!);
  t.like(receipt, { success: true, network: 'base-sepolia', payer: payer.address });
  const settle = facilitator.calls.find(
    (call) =>
      call.path === '/settle' &&
      call.body.x402Version === 1 &&
      facilitator.transfers.some((entry) => entry.nonce === call.body.paymentPayload.payload.authorization.nonce),
  );
  t.like(settle?.body.paymentRequirements, { network: 'base-sepolia', maxAmountRequired: '5000', payTo: PAY_TO });
});

test('a replayed payment is refused with 402, a fresh challenge and the reason; it is settled once', async (t) => {
  const { fetch: paying, sent } = v2Payer();
  const first = await paying(`${svc.baseUrl}/x402/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chatBody() });
  t.is(first.status, 200);
  const replay = await post(svc, chatBody(), { 'payment-signature': sent[0]! });
  t.is(replay.status, 402);
  t.like(await replay.json(), { code: 'x402_payment_refused', reason: 'payment_replayed' });
  const challenge = decodePaymentRequiredHeader(replay.headers.get('payment-required')!);
  t.is(challenge.error, 'payment_replayed');
  t.is(challenge.accepts[0]!.amount, '5000');
  t.is(settlesOf(nonceOf(sent[0]!)).length, 1);
});

test('one payment raced through two replicas on one database is served once', async (t) => {
  // The embedded database cannot be shared between servers: there the peer is the same server.
  const peer =
    svc.database.kind === 'postgres'
      ? await startTestServer({ database: svc.database, env: { SVC_X402_PAY_TO: PAY_TO, SVC_X402_FACILITATOR_URL: facilitator.url } })
      : svc;
  if (peer !== svc) t.teardown(() => peer.close());
  const header = await signedPayment(await freshChallenge());
  const racing = await Promise.all([svc, peer, svc, peer, svc, peer].map((replica) => post(replica, chatBody(), { 'payment-signature': header })));
  t.is(racing.filter((response) => response.status === 200).length, 1);
  const refused = racing.filter((response) => response.status === 402);
  t.is(refused.length, 5);
  for (const response of refused) t.is((await response.json()).reason, 'payment_replayed');
  t.is(settlesOf(nonceOf(header)).length, 1);
});

test('a wrong amount, a wrong payee, an expired or not yet valid authorization and a forged signature are refused here, before the facilitator', async (t) => {
  const challenge = await freshChallenge();
  const nonces: string[] = [];
  const cases: Array<[string, Promise<string>]> = [
    ['amount_mismatch', signedPayment(challenge, { value: '4999' })],
    ['amount_mismatch', signedPayment(challenge, { value: '5001' })],
    ['payee_mismatch', signedPayment(challenge, { to: '0x2222222222222222222222222222222222222222' })],
    ['authorization_expired', signedPayment(challenge, { validBefore: Math.floor(Date.now() / 1000) - 1 })],
    ['authorization_not_yet_valid', signedPayment(challenge, { validAfter: Math.floor(Date.now() / 1000) + 120 })],
  ];
  for (const [reason, pending] of cases) {
    const header = await pending;
    nonces.push(nonceOf(header));
    const response = await post(svc, chatBody(), { 'payment-signature': header });
    t.is(response.status, 402, reason);
    const body = await response.json();
    t.like(body, { code: 'x402_payment_refused', reason }, reason);
    t.truthy(response.headers.get('payment-required'), `${reason}: a fresh challenge`);
  }
  const genuine = JSON.parse(Buffer.from(await signedPayment(challenge), 'base64').toString('utf8'));
  nonces.push(genuine.payload.authorization.nonce);
  genuine.payload.authorization.from = '0x3333333333333333333333333333333333333333';
  const forged = await post(svc, chatBody(), { 'payment-signature': Buffer.from(JSON.stringify(genuine)).toString('base64') });
  t.like(await forged.json(), { reason: 'signature_invalid' });
  const garbage = await post(svc, chatBody(), { 'payment-signature': 'not base64 json' });
  t.like(await garbage.json(), { reason: 'payment_malformed' });
  t.deepEqual(nonces.flatMap(callsWith), [], 'the facilitator was never asked');
});

test('a call that fails after verification is not settled, and the same authorization pays a later call', async (t) => {
  const header = await signedPayment(await freshChallenge());
  const nonce = nonceOf(header);
  const failed = await post(svc, JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'hello' }] }), { 'payment-signature': header });
  t.is(failed.status, 422);
  t.is((await failed.json()).code, 'model_not_found');
  t.is(settlesOf(nonce).length, 0, 'not charged');
  const retried = await post(svc, chatBody(), { 'payment-signature': header });
  t.is(retried.status, 200);
  t.is(settlesOf(nonce).length, 1);
});

test('a claim left by a server that died mid-call is released after its stale age; a live claim is a replay', async (t) => {
  const header = await signedPayment(await freshChallenge());
  const authorization = JSON.parse(Buffer.from(header, 'base64').toString('utf8')).payload.authorization;
  // What a server killed between claiming and settling leaves behind.
  const claim = {
    network: 'eip155:84532',
    asset: BASE_SEPOLIA_USDC,
    payer: authorization.from,
    nonce: authorization.nonce,
    x402Version: 2,
    amount: '5000',
    payTo: PAY_TO,
    requestId: 'req-of-a-dead-server',
  };
  t.truthy(await claimAuthorization(svc.server.database.sequelize, claim));
  const blocked = await post(svc, chatBody(), { 'payment-signature': header });
  t.like(await blocked.json(), { reason: 'payment_replayed' });
  await svc.server.database.sequelize.query(`UPDATE x402_payments SET updated_at = now() - make_interval(secs => :age) WHERE nonce = :nonce`, {
    replacements: { age: STALE_CLAIM_SECONDS + 1, nonce: authorization.nonce.toLowerCase() },
  });
  const served = await post(svc, chatBody(), { 'payment-signature': header });
  t.is(served.status, 200);
  t.is(settlesOf(authorization.nonce).length, 1);
});

test('a payment that fails to settle withholds the answer: 402 settlement_failed, and nothing is charged', async (t) => {
  const header = await signedPayment(await freshChallenge());
  facilitator.failSettleOf(nonceOf(header));
  const response = await post(svc, chatBody(), { 'payment-signature': header });
  t.is(response.status, 402);
  const body = await response.json();
  t.like(body, { code: 'x402_payment_refused', reason: 'settlement_failed' });
  t.is(body.choices, undefined);
  t.regex(body.error, /transaction_failed/);
  t.false(facilitator.transfers.some((entry) => entry.nonce === nonceOf(header)));
});

test('stream: true is paid before the first event, and the stream carries PAYMENT-RESPONSE', async (t) => {
  const { fetch: paying } = v2Payer();
  const response = await paying(`${svc.baseUrl}/x402/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: chatBody('How do I stream chat completions?', { stream: true }),
  });
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /text\/event-stream/);
  t.true(decodePaymentResponseHeader(response.headers.get('payment-response')!).success);
  const text = await response.text();
  t.regex(text, /"object":"chat.completion.chunk"/);
  t.true(text.trimEnd().endsWith('data: [DONE]'));
  // The engine is asked for usage (funding-step.ts); this caller did not ask, so none is sent.
  t.false(text.includes('"usage"'));
});

test('the well-known document: the same payment contract on both paths, HEAD too', async (t) => {
  const [plain, json] = await Promise.all([fetch(`${svc.baseUrl}/.well-known/x402`), fetch(`${svc.baseUrl}/.well-known/x402.json`)]);
  t.is(plain.status, 200);
  const document = await plain.json();
  t.deepEqual(await json.json(), document);
  t.deepEqual(document, {
    x402Version: 2,
    versions: [2, 1],
    enabled: true,
    scheme: 'exact',
    network: 'eip155:84532',
    network_v1: 'base-sepolia',
    asset: BASE_SEPOLIA_USDC,
    asset_name: 'USDC',
    asset_version: '2',
    amount: '5000',
    pay_to: PAY_TO,
    max_timeout_seconds: 300,
    facilitator: facilitator.url,
    resources: ['POST /x402/chat/completions'],
  });
  const head = await fetch(`${svc.baseUrl}/.well-known/x402`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(await head.text(), '');
  t.deepEqual(await svc.client().x402.discovery(), document, 'client.x402 is derived from the contract');
});

test('without a pay-to address: the route answers 503 x402_not_configured and the document says disabled', async (t) => {
  const response = await post(unconfigured, chatBody());
  t.is(response.status, 503);
  t.is((await response.json()).code, 'x402_not_configured');
  const document = await unconfigured.client().x402.discoveryJson();
  t.like(document, { enabled: false, pay_to: null, network: 'eip155:84532', facilitator: 'https://x402.org/facilitator' });
});

test('an unreachable facilitator answers 502 x402_facilitator_error, and the payment stays usable', async (t) => {
  const gone = await startFakeFacilitator();
  await gone.close();
  const stranded = await startTestServer({ env: { SVC_X402_PAY_TO: PAY_TO, SVC_X402_FACILITATOR_URL: gone.url } });
  t.teardown(() => stranded.close());
  const challenge = decodePaymentRequiredHeader((await post(stranded, chatBody())).headers.get('payment-required')!);
  const header = await signedPayment(challenge);
  const response = await post(stranded, chatBody(), { 'payment-signature': header });
  t.is(response.status, 502);
  t.is((await response.json()).code, 'x402_facilitator_error');
  t.truthy(response.headers.get('retry-after'));
  const again = await post(stranded, chatBody(), { 'payment-signature': header });
  t.is(again.status, 502, 'the claim was released: the same payment is tried again, not called a replay');
});

test('configuration: a bad pay-to address, an unknown network or an unknown token without its EIP-712 domain stop the server with the variable named', (t) => {
  const fails = (env: Record<string, string>) => t.throws(() => loadConfig(env), { instanceOf: ConfigError });
  t.regex(fails({ SVC_X402_PAY_TO: '0x123' })!.message, /SVC_X402_PAY_TO=.*EVM address/);
  t.regex(fails({ SVC_X402_NETWORK: 'eip155:999999' })!.message, /SVC_X402_NETWORK/);
  t.regex(fails({ SVC_X402_ASSET: '0x4444444444444444444444444444444444444444' })!.message, /SVC_X402_ASSET_NAME and SVC_X402_ASSET_VERSION/);
  const custom = loadConfig({
    SVC_X402_NETWORK: 'eip155:8453',
    SVC_X402_ASSET: '0x4444444444444444444444444444444444444444',
    SVC_X402_ASSET_NAME: 'Test Dollar',
    SVC_X402_ASSET_VERSION: '1',
  }).x402;
  t.like(custom, { network: 'eip155:8453', networkV1: 'base', chainId: 8453, assetName: 'Test Dollar', assetVersion: '1', payTo: undefined });
  t.like(loadConfig({ SVC_X402_NETWORK: 'eip155:8453' }).x402, {
    asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    assetName: 'USD Coin',
    assetVersion: '2',
  });
});

test('configuration: with nothing set, pay-per-call is off and the defaults read as x402 resolves them when configured', (t) => {
  // Unset, the network's asset and names are looked up only when first read (x402-config.ts).
  const unset = loadConfig({}).x402;
  const configured = loadConfig({ SVC_X402_PAY_TO: PAY_TO }).x402;
  t.is(unset.payTo, undefined);
  t.deepEqual(
    {
      network: unset.network,
      networkV1: unset.networkV1,
      chainId: unset.chainId,
      asset: unset.asset,
      assetName: unset.assetName,
      assetVersion: unset.assetVersion,
      facilitatorUrl: unset.facilitatorUrl,
      facilitatorTimeoutMs: unset.facilitatorTimeoutMs,
    },
    {
      network: 'eip155:84532',
      networkV1: 'base-sepolia',
      chainId: 84532,
      asset: BASE_SEPOLIA_USDC,
      assetName: 'USDC',
      assetVersion: '2',
      facilitatorUrl: 'https://x402.org/facilitator',
      facilitatorTimeoutMs: 15_000,
    },
  );
  t.like(configured, {
    network: unset.network,
    networkV1: unset.networkV1,
    chainId: unset.chainId,
    asset: unset.asset,
    assetName: unset.assetName,
    assetVersion: unset.assetVersion,
    payTo: PAY_TO,
  });
});

test('a stream that fails part-way is never settled, nothing of it is charged, and the payment can be sent again', async (t) => {
  // The built-in engine does not fail mid-stream, so the x402 step (real database, real
  // facilitator client against the fake) wraps a chat handler whose stream breaks after a chunk.
  const config = { ...svc.server.config.x402, payTo: PAY_TO, facilitatorUrl: facilitator.url };
  const step = x402Funding({
    sequelize: svc.server.database.sequelize,
    config,
    resourceUrl: () => `${svc.baseUrl}/x402/chat/completions`,
    discoveryUrl: () => `${svc.baseUrl}/.well-known/x402`,
    log: svc.server.log,
  });
  const header = await signedPayment(await freshChallenge());
  const request = {
    requestId: 'req-stream-failure',
    ip: '127.0.0.1',
    principal: anonymousPrincipal,
    bearer: undefined,
    signal: new AbortController().signal,
    log: svc.server.log,
    publicUrl: svc.baseUrl,
    headers: { 'payment-signature': header },
  } as unknown as RequestContext;
  const chunk: ChatCompletionChunk = {
    id: 'chatcmpl-x',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'svc-extractive-chat',
    choices: [{ index: 0, delta: { content: 'half an ans' }, finish_reason: null }],
  };
  const breaking = async () =>
    (async function* () {
      yield { event: 'message', data: chunk };
      throw Object.assign(new Error('the engine went away'), { code: 'upstream_error' });
    })();
  await t.throwsAsync(runFunded(step, breaking, { messages: [{ role: 'user', content: 'hi' }], stream: true } as never, request), {
    message: 'the engine went away',
  });
  t.is(settlesOf(nonceOf(header)).length, 0);
  const retried = await post(svc, chatBody(), { 'payment-signature': header });
  t.is(retried.status, 200, 'the claim was released');
  t.is(settlesOf(nonceOf(header)).length, 1);
});
