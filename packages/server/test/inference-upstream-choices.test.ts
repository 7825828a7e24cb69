import test from 'ava';
import OpenAI from 'openai';
import { grantCredits } from '../src/features/billing/credit-ledger.ts';
import { fakeAnswer, fakeUsageWithDetails } from '@svc/testing/fake-openai-upstream';
import { createKey, signInAgent } from '@svc/testing/identity';
import { postJson, sseData, startUpstreamHarness, type UpstreamHarness } from './helpers/inference-upstream-setup.ts';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * Chat `n > 1` and the upstream's token details, through the real `openai` client over the fake
 * upstream (which answers `n` choices and OpenAI's usage details, as OpenAI does).
 */
let harness: UpstreamHarness;
let openai: OpenAI;

test.before(async () => {
  harness = await startUpstreamHarness({ modelList: 'details-n,details-n-stream,details-n-metrics,details-n-credits,midstream-error-n' });
  openai = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
});
test.after.always(async () => {
  await harness?.close();
});

const words = (text: string) => text.split(' ').length;
/** What the fake reports for a prompt of `promptWords` words answered with `n` choices. */
const usageFor = (promptWords: number, n: number) =>
  fakeUsageWithDetails(
    promptWords,
    Array.from({ length: n }, (_, index) => words(fakeAnswer(index))).reduce((sum, count) => sum + count, 0),
  );

test('n: 2 passes to the upstream; the answer has both choices by index and the usage with its details', async (t) => {
  const completion = await openai.chat.completions.create({ model: 'details-n', messages: [{ role: 'user', content: 'two answers please' }], n: 2 });
  t.deepEqual(
    completion.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason]),
    [
      [0, fakeAnswer(0), 'stop'],
      [1, fakeAnswer(1), 'stop'],
    ],
  );
  t.not(fakeAnswer(0), fakeAnswer(1), 'the two choices differ, so a merged or dropped one would show');
  t.deepEqual(completion.usage, usageFor(3, 2));
  t.true((completion.usage?.prompt_tokens_details?.cached_tokens ?? 0) > 0, 'a non-zero count passes through, not only zeros');
  t.is(harness.fake.requests.find((request) => request.body.model === 'details-n')?.body.n, 2);
});

test("n: 2 streamed: every chunk's choice keeps its index, both answers arrive whole, the usage chunk carries the details once", async (t) => {
  const stream = await openai.chat.completions.create({
    model: 'details-n-stream',
    messages: [{ role: 'user', content: 'two streamed answers' }],
    n: 2,
    stream: true,
    stream_options: { include_usage: true },
  });
  const texts = new Map<number, string>();
  const finishes = new Map<number, string | null>();
  const usages = [];
  for await (const chunk of stream) {
    if (chunk.usage) usages.push(chunk.usage);
    for (const choice of chunk.choices) {
      texts.set(choice.index, (texts.get(choice.index) ?? '') + (choice.delta.content ?? ''));
      if (choice.finish_reason) finishes.set(choice.index, choice.finish_reason);
    }
  }
  t.deepEqual([...texts].sort(), [
    [0, fakeAnswer(0)],
    [1, fakeAnswer(1)],
  ]);
  t.deepEqual([...finishes].sort(), [
    [0, 'stop'],
    [1, 'stop'],
  ]);
  t.deepEqual(usages, [usageFor(3, 2)]);
});

test('an n: 2 call is counted once, by the usage the upstream reported for both choices: one usage event, and /v1/metrics adds its total', async (t) => {
  const before = harness.usage.length;
  const stream = await openai.chat.completions.create({
    model: 'details-n-metrics',
    messages: [{ role: 'user', content: 'count me once' }],
    n: 2,
    stream: true,
  });
  for await (const _chunk of stream);
  await waitUntil('the usage event of the n: 2 call', () => harness.usage.slice(before).some((event) => event.model === 'details-n-metrics'));
  const events = harness.usage.slice(before).filter((event) => event.model === 'details-n-metrics');
  t.is(events.length, 1);
  t.true(events[0]!.ok);
  t.deepEqual(events[0]!.usage, usageFor(3, 2), "the upstream's figure, not a count of the words svc relayed");
  const metrics = await (await fetch(`${harness.svc.baseUrl}/v1/metrics`, { headers: { authorization: `Bearer ${harness.svc.operatorToken}` } })).text();
  const tokens = metrics.match(/^svc_inference_tokens_total\{operation="chat",model="details-n-metrics",engine="upstream"\} (\d+)$/m);
  t.is(Number(tokens?.[1]), usageFor(3, 2).total_tokens);
});

test("paid with credits, a streamed n: 2 call costs one credit, its receipt holds the upstream's usage, and its replay answers both choices", async (t) => {
  const agent = await signInAgent(harness.svc);
  const key = await createKey(agent.client, ['billing:read', 'billing:write', 'inference:invoke']);
  const sequelize = harness.svc.server.database.sequelize;
  await sequelize.transaction((transaction) => grantCredits(sequelize, transaction, agent.id, 2, `test-grant-${agent.id}`));
  const body = {
    model: 'details-n-credits',
    messages: [{ role: 'user', content: 'paid answers' }],
    n: 2,
    stream: true,
    stream_options: { include_usage: true },
  };
  const call = () =>
    postJson(harness.svc, '/v1/credits/chat/completions', body, {
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json', 'idempotency-key': 'choices-1' },
    });
  const streamed = await call();
  t.is(streamed.status, 200);
  await streamed.text();
  const client = harness.svc.client({ token: key.secret });
  t.like(await client.billing.balance(), { spendable: 1, reserved: 0 });
  const receipts = await client.billing.usage({ query: { limit: 10 } });
  if (receipts instanceof Response) return t.fail('expected JSON');
  t.is(receipts.data.length, 1);
  t.deepEqual(receipts.data[0]!.usage, usageFor(2, 2));
  const replay = await call();
  t.is(replay.headers.get('idempotent-replayed'), 'true');
  const completion = (await replay.json()) as OpenAI.ChatCompletion;
  t.deepEqual(
    completion.choices.map((choice) => [choice.index, choice.message.content]),
    [
      [0, fakeAnswer(0)],
      [1, fakeAnswer(1)],
    ],
  );
  t.like(await client.billing.balance(), { spendable: 1, reserved: 0 });
});

test('a failure mid-stream with n: 2 ends each unfinished choice with finish_reason "error", then [DONE]', async (t) => {
  const response = await postJson(harness.svc, '/v1/chat/completions', {
    model: 'midstream-error-n',
    messages: [{ role: 'user', content: 'break' }],
    n: 2,
    stream: true,
  });
  const data = sseData(await response.text());
  t.is(data.at(-1), '[DONE]');
  const last = data.at(-2) as { error: { code: string }; choices: Array<{ index: number; finish_reason: string }> };
  t.is(last.error.code, 'upstream_error');
  t.deepEqual(
    last.choices.map((choice) => [choice.index, choice.finish_reason]),
    [
      [0, 'error'],
      [1, 'error'],
    ],
  );
});

test('the built-in engine answers one choice: n: 2 is a 400 chat_choices_unsupported naming n, JSON and streamed, before any stream starts', async (t) => {
  for (const stream of [false, true]) {
    const error = await t.throwsAsync(
      openai.chat.completions.create({ model: 'svc-extractive-chat', messages: [{ role: 'user', content: 'What is svc?' }], n: 2, stream }),
      { instanceOf: OpenAI.BadRequestError },
    );
    t.is(error.status, 400);
    t.regex(error.message, /answers one choice: n must be 1/);
  }
  const raw = await postJson(harness.svc, '/v1/chat/completions', {
    model: 'svc-extractive-chat',
    messages: [{ role: 'user', content: 'What is svc?' }],
    n: 2,
    stream: true,
  });
  t.is(raw.status, 400);
  t.like(await raw.json(), { code: 'chat_choices_unsupported', detail: [{ loc: ['body', 'n'] }] });
  const one = await openai.chat.completions.create({ model: 'svc-extractive-chat', messages: [{ role: 'user', content: 'What is svc?' }], n: 1 });
  t.is(one.choices.length, 1);
});

test('n past 128 is refused by the contract with 422 naming the limit', async (t) => {
  const response = await postJson(harness.svc, '/v1/chat/completions', { model: 'details-n', messages: [{ role: 'user', content: 'many' }], n: 129 });
  t.is(response.status, 422);
  const body = (await response.json()) as { detail: Array<{ loc: unknown[]; msg: string }> };
  t.deepEqual(body.detail[0]!.loc, ['body', 'n']);
  t.regex(body.detail[0]!.msg, /at most 128/);
});
