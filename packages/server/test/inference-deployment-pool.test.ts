import test from 'ava';
import pino from 'pino';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { waitUntil } from '@svc/testing/wait-until';
import type { RoutingSettings } from '../src/inference/openai-compatible/deployment-config.ts';
import { createDeploymentPool } from '../src/inference/openai-compatible/deployment-pool.ts';
import { createOpenAiCompatibleProvider, upstreamModelEntry } from '../src/inference/openai-compatible/openai-compatible-provider.ts';
import type { UpstreamModelSettings, UpstreamSettings } from '../src/inference/openai-compatible/upstream-config.ts';
import { EngineUnavailableError, type InferenceProvider } from '../src/inference/provider.ts';

/*
 * The deployment pool on its own, over the real OpenAI-compatible engine and fake upstreams
 * (the third party), for what a whole server makes slow to reach: the retry window at its edge,
 * and a probe that is still running when other calls arrive.
 */

const fakes: FakeUpstream[] = [];
const providers: InferenceProvider[] = [];
test.after.always(async () => {
  for (const provider of providers) await provider.close?.();
  for (const fake of fakes) await fake.close();
});

const log = pino({ level: 'silent' });
const routing = (overrides: Partial<RoutingSettings> = {}): RoutingSettings => ({
  failuresToCooldown: 1,
  cooldownMs: 200,
  cooldownMaxMs: 10_000,
  retryWindowMs: 30_000,
  backoffBaseMs: 0,
  ...overrides,
});

/** A pool of one model on `count` fresh fakes, the first weighted 1000 to 1 so it is almost always tried first. */
async function poolOver(count: number, settings: RoutingSettings, upstreamModel = 'answer-pool') {
  const upstreams = new Map<string, InferenceProvider>();
  const mine: FakeUpstream[] = [];
  for (let index = 0; index < count; index++) {
    const fake = await startFakeOpenAiUpstream();
    fakes.push(fake);
    mine.push(fake);
    const upstream: UpstreamSettings = {
      id: `d${index}`,
      label: `d${index}`,
      baseUrl: fake.baseUrl,
      apiKey: undefined,
      timeoutMs: 5_000,
      idleTimeoutMs: 5_000,
      rerankApi: 'cohere',
      rerankUrl: `${fake.baseUrl}/rerank`,
    };
    const provider = createOpenAiCompatibleProvider(upstream);
    providers.push(provider);
    upstreams.set(upstream.id, provider);
  }
  const model: UpstreamModelSettings = {
    id: 'pooled',
    upstream: 'd0',
    upstreamModel,
    capabilities: ['chat'],
    label: 'pooled',
    description: 'pooled',
    dimensions: undefined,
    fallbacks: [],
    deployments: mine.map((_, index) => ({ upstream: `d${index}`, upstreamModel, weight: index === 0 ? 1000 : 1, maxInFlight: undefined })),
    balancing: 'weighted',
  };
  const entry = upstreamModelEntry(model);
  const pool = createDeploymentPool(model, entry, upstreams, settings, undefined);
  const body = { model: 'pooled', messages: [{ role: 'user' as const, content: 'hi' }] };
  const chat = () => pool.provider.chat!({ model: entry, body }, { signal: new AbortController().signal, log });
  const stream = () => pool.provider.chatStream!({ model: entry, body }, { signal: new AbortController().signal, log });
  return { pool, fakes: mine, chat, stream };
}

async function drain(stream: AsyncIterable<unknown>): Promise<number> {
  let chunks = 0;
  for await (const _ of stream) chunks++;
  return chunks;
}

test('a retry window of 0 ms allows no retry: the first failure goes up and the sibling gets nothing', async (t) => {
  const {
    fakes: [first, second],
    chat,
  } = await poolOver(2, routing({ retryWindowMs: 0 }));
  first!.setOutage({ status: 500 });
  const failure = await t.throwsAsync(chat());
  t.true(failure instanceof EngineUnavailableError);
  t.is(first!.requests.length, 1);
  t.is(second!.requests.length, 0);
});

test('a retry window of 1 s with a 0 ms backoff retries on the sibling at once', async (t) => {
  const {
    fakes: [first, second],
    chat,
  } = await poolOver(2, routing({ retryWindowMs: 1_000 }));
  first!.setOutage({ status: 500 });
  const answer = await chat();
  t.is(answer.object, 'chat.completion');
  t.is(first!.requests.length, 1);
  t.is(second!.requests.length, 1);
});

test('while a probe is in flight no other call goes to its deployment; when it ends well, the deployment is healthy again', async (t) => {
  // `pause-*` streams hold their call open 300 ms after the first chunk: the probe is still in flight meanwhile.
  const {
    pool,
    fakes: [first, second],
    stream,
  } = await poolOver(2, routing({ cooldownMs: 1_000 }), 'pause-pool');
  first!.setOutage({ status: 500 });
  const retried = await stream();
  t.is(pool.report(Date.now())[0]!.state, 'cooling_down');
  await drain(retried);
  await waitUntil('the cooldown ended', () => pool.report(Date.now())[0]!.state === 'probe_due');
  first!.setOutage(undefined);
  const probe = await stream();
  t.is(first!.requests.length, 2, 'the probe went to the heavy deployment');
  t.is(pool.report(Date.now())[0]!.state, 'probing');
  const before = second!.requests.length;
  await Promise.all(Array.from({ length: 10 }, async () => drain(await stream())));
  t.is(first!.requests.length, 2, 'nothing else while the probe runs');
  t.is(second!.requests.length - before, 10);
  await drain(probe);
  t.is(pool.report(Date.now())[0]!.state, 'healthy');
  await drain(await stream());
  t.is(first!.requests.length, 3, 'restored, it takes calls again');
});
