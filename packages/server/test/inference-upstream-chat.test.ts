import test, { type ExecutionContext } from 'ava';
import OpenAI from 'openai';
import { FAKE_ANSWER } from '@svc/testing/fake-openai-upstream';
import { waitUntil } from '@svc/testing/wait-until';
import { postJson, SECOND_SECRET, sseData, startUpstreamHarness, UPSTREAM_SECRET, type UpstreamHarness } from './helpers/inference-upstream-setup.ts';

let harness: UpstreamHarness;
let openai: OpenAI;

test.before(async () => {
  harness = await startUpstreamHarness({
    modelList: 'answer-a,answer-usage,midstream-error-a,refuse-a,pause-a,slow-a,burst-a,pretty-a,truncated-a,endless-error-a',
    env: { SVC_SSE_KEEPALIVE_MS: '40', SECOND_KEY: SECOND_SECRET },
    fake: { pauseMs: 600 },
    modelsFile: {
      upstreams: [
        { id: 'second', base_url: '{fake}/v1', api_key_env: 'SECOND_KEY' },
        { id: 'stalling', base_url: '{fake}/v1', timeout_ms: 300 },
        { id: 'impatient', base_url: '{fake}/v1', idle_timeout_ms: 500 },
        { id: 'nowhere', base_url: 'http://127.0.0.1:1/v1' },
      ],
      models: [
        { id: 'flaky-chat', upstream: 'upstream', upstream_model: 'broken-primary', capabilities: ['chat'], fallbacks: ['backup-chat'] },
        { id: 'backup-chat', upstream: 'second', upstream_model: 'answer-backup', capabilities: ['chat'] },
        { id: 'hanging-chat', upstream: 'stalling', upstream_model: 'hang-forever', capabilities: ['chat'] },
        { id: 'impatient-chat', upstream: 'impatient', upstream_model: 'pause-long-impatient', capabilities: ['chat'] },
        { id: 'locked-chat', upstream: 'upstream', upstream_model: 'unauthorized-x', capabilities: ['chat'] },
        { id: 'unreachable-chat', upstream: 'nowhere', upstream_model: 'any', capabilities: ['chat'] },
        { id: 'hanging-then-backup', upstream: 'stalling', upstream_model: 'hang-first', capabilities: ['chat'], fallbacks: ['backup-chat'] },
      ],
      defaults: { chat: 'answer-a' },
    },
  });
  openai = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
});
test.after.always(async () => {
  await harness?.close();
});

test("the openai client gets a chat.completion passed through, named by svc's model id, with usage", async (t) => {
  const completion = await openai.chat.completions.create({ model: 'answer-a', messages: [{ role: 'user', content: 'Say hello please' }], temperature: 0.2 });
  t.is(completion.object, 'chat.completion');
  t.is(completion.model, 'answer-a');
  t.is(completion.choices[0]!.message.content, FAKE_ANSWER);
  t.deepEqual(completion.usage, { prompt_tokens: 3, completion_tokens: FAKE_ANSWER.split(' ').length, total_tokens: 3 + FAKE_ANSWER.split(' ').length });
  const sent = harness.fake.requests.find((request) => request.body.model === 'answer-a' && request.body.temperature === 0.2 && request.body.stream === false);
  t.truthy(sent, "the caller's fields reach the upstream");
  t.is(sent!.authorization, `Bearer ${UPSTREAM_SECRET}`, 'svc sends the configured key upstream');
});

test('a request with no model uses the configured default', async (t) => {
  const completion = await openai.chat.completions.create({ model: undefined as unknown as string, messages: [{ role: 'user', content: 'hi' }] });
  t.is(completion.model, 'answer-a');
});

test('the openai client streams chunks with for await; include_usage gives a last chunk with empty choices and the usage', async (t) => {
  const stream = await openai.chat.completions.create({
    model: 'answer-usage',
    messages: [{ role: 'user', content: 'one two' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  const chunks = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    text += chunk.choices[0]?.delta.content ?? '';
  }
  t.is(text, FAKE_ANSWER);
  t.true(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === 'answer-usage'));
  const last = chunks.at(-1)!;
  t.deepEqual(last.choices, []);
  t.is(last.usage?.prompt_tokens, 2);
  t.is(last.usage?.completion_tokens, FAKE_ANSWER.split(' ').length);
  t.is(chunks.filter((chunk) => chunk.usage).length, 1, 'the usage comes once');
  await waitUntil('the usage hook to hear of the stream when it ended', () => harness.usage.some((event) => event.model === 'answer-usage' && event.ok));
  t.is(harness.usage.find((event) => event.model === 'answer-usage')!.usage.completion_tokens, FAKE_ANSWER.split(' ').length);
});

test('on the wire: data-only chunks ending data: [DONE], no usage chunk unless asked, yet usage still reported', async (t) => {
  const response = await postJson(harness.svc, '/v1/chat/completions', { model: 'answer-a', messages: [{ role: 'user', content: 'a b c d' }], stream: true });
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type')!, /^text\/event-stream/);
  const text = await response.text();
  t.false(/^event:/m.test(text), 'no event names: OpenAI streams are data-only');
  const data = sseData(text);
  t.is(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1) as Array<{ choices: unknown[]; usage?: unknown }>;
  t.true(chunks.every((chunk) => chunk.choices.length > 0 && chunk.usage === undefined));
  await waitUntil('the usage of the answer-a stream (4 prompt tokens)', () =>
    harness.usage.some((event) => event.model === 'answer-a' && event.operation === 'chat' && event.usage.prompt_tokens === 4),
  );
  const asked = harness.fake.requests.filter((request) => request.body.model === 'answer-a' && request.body.stream === true).at(-1)!;
  t.deepEqual(asked.body.stream_options, { include_usage: true }, 'svc always asks the upstream for usage, to count it');
});

test('chunks pass through with every field the upstream sent; pretty-printed events go out one line each', async (t) => {
  const plain = sseData(
    await (await postJson(harness.svc, '/v1/chat/completions', { model: 'answer-a', messages: [{ role: 'user', content: 'hi' }], stream: true })).text(),
  );
  const chunks = plain.slice(0, -1) as Array<{ model: string; system_fingerprint?: string; choices: Array<{ logprobs?: unknown }> }>;
  t.true(
    chunks.every((chunk) => chunk.model === 'answer-a' && chunk.system_fingerprint === 'fp_fake' && chunk.choices[0]!.logprobs === null),
    'fields svc does not read are kept',
  );

  const response = await postJson(harness.svc, '/v1/chat/completions', {
    model: 'pretty-a',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const text = await response.text();
  const events = text.split('\n\n').filter(Boolean);
  t.true(
    events.every((event) => /^data: [^\n]+$/.test(event)),
    "one data line per event, whatever the upstream's line breaks",
  );
  const data = sseData(text) as Array<{ model: string; choices: Array<{ delta: { content?: string } }>; usage?: { completion_tokens?: number } } | string>;
  t.is(data.at(-1), '[DONE]');
  t.is(data.map((chunk) => (typeof chunk === 'string' ? '' : (chunk.choices[0]?.delta.content ?? ''))).join(''), FAKE_ANSWER);
  t.true(data.slice(0, -1).every((chunk) => typeof chunk !== 'string' && chunk.model === 'pretty-a'));
  t.is((data.at(-2) as { usage?: { completion_tokens?: number } }).usage?.completion_tokens, FAKE_ANSWER.split(' ').length);
});

test('a burst of 300 chunks in one go (more than svc queues before pausing the upstream) arrives whole and in order', async (t) => {
  const stream = await openai.chat.completions.create({ model: 'burst-a', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  t.is(text, Array.from({ length: 300 }, (_, index) => `w${index} `).join(''));
});

test('an upstream error mid-stream ends the stream with an error chunk and [DONE]; the openai client throws it', async (t) => {
  const response = await postJson(harness.svc, '/v1/chat/completions', {
    model: 'midstream-error-a',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
  });
  t.is(response.status, 200);
  const data = sseData(await response.text());
  t.is(data.at(-1), '[DONE]');
  const last = data.at(-2) as { error: { code: string; message: string }; choices: Array<{ finish_reason: string }> };
  t.is(last.error.code, 'upstream_error');
  t.regex(last.error.message, /crashed/);
  t.is(last.choices[0]!.finish_reason, 'error');
  t.true(data.length > 3, 'the chunks before the failure were sent');

  const stream = await openai.chat.completions.create({ model: 'midstream-error-a', messages: [{ role: 'user', content: 'hi' }], stream: true });
  const error = await t.throwsAsync(async () => {
    for await (const chunk of stream) void chunk;
  });
  t.regex(error!.message, /crashed/);
  t.is((error as { code?: string }).code, 'upstream_error');
  await waitUntil('a failed usage event with upstream_error', () =>
    harness.usage.some((event) => event.model === 'midstream-error-a' && !event.ok && event.errorCode === 'upstream_error'),
  );
});

test('an upstream whose body ends without [DONE] ends the stream with an upstream_error chunk after the chunks it sent', async (t) => {
  const data = sseData(
    await (await postJson(harness.svc, '/v1/chat/completions', { model: 'truncated-a', messages: [{ role: 'user', content: 'hi' }], stream: true })).text(),
  );
  t.is(data.at(-1), '[DONE]');
  const chunks = data.slice(0, -1) as Array<{
    choices: Array<{ delta: { content?: string }; finish_reason: string | null }>;
    error?: { code: string; message: string };
  }>;
  t.is(
    chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''),
    FAKE_ANSWER.split(/(?<= )/)
      .slice(0, 2)
      .join(''),
    'the chunks before the end arrive',
  );
  t.is(chunks.at(-1)!.error?.code, 'upstream_error');
  t.regex(chunks.at(-1)!.error!.message, /without \[DONE\]/);
  t.is(chunks.at(-1)!.choices[0]!.finish_reason, 'error');
});

test('an upstream that never answers is a 504 upstream_timeout after its deadline', async (t) => {
  const started = performance.now();
  const response = await postJson(harness.svc, '/v1/chat/completions', { model: 'hanging-chat', messages: [{ role: 'user', content: 'hi' }], stream: true });
  const elapsed = performance.now() - started;
  t.is(response.status, 504);
  const body = (await response.json()) as { code: string; error: string };
  t.is(body.code, 'upstream_timeout');
  t.regex(body.error, /stalling/);
  t.true(elapsed >= 290 && elapsed < 3000, `answered after ${elapsed.toFixed(0)} ms (deadline 300 ms)`);
  const json = await postJson(harness.svc, '/v1/chat/completions', { model: 'hanging-chat', messages: [{ role: 'user', content: 'hi' }] });
  t.is(json.status, 504);
  t.is(((await json.json()) as { code: string }).code, 'upstream_timeout');
});

test('an upstream silent mid-stream past its idle deadline ends the stream with an upstream_timeout error chunk', async (t) => {
  const response = await postJson(harness.svc, '/v1/chat/completions', {
    model: 'impatient-chat',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  t.is(response.status, 200);
  const data = sseData(await response.text());
  t.is(data.at(-1), '[DONE]');
  const last = data.at(-2) as { error: { code: string }; choices: Array<{ finish_reason: string }>; usage?: { completion_tokens?: number } };
  t.is(last.error.code, 'upstream_timeout');
  t.is(last.choices[0]!.finish_reason, 'error');
  t.true((last.usage?.completion_tokens ?? 0) > 0, 'with include_usage, the error chunk carries the usage so far');
});

test('a model whose upstream fails before the first byte falls back to the next model', async (t) => {
  const completion = await openai.chat.completions.create({ model: 'flaky-chat', messages: [{ role: 'user', content: 'hi' }] });
  t.is(completion.model, 'backup-chat');
  t.is(completion.choices[0]!.message.content, FAKE_ANSWER);
  const backup = harness.fake.requests.find((request) => request.body.model === 'answer-backup')!;
  t.is(backup.authorization, 'Bearer sk-second-upstream-secret-b71e09d3', 'each upstream gets its own key');

  const stream = await openai.chat.completions.create({ model: 'hanging-then-backup', messages: [{ role: 'user', content: 'hi' }], stream: true });
  let text = '';
  for await (const chunk of stream) {
    t.is(chunk.model, 'backup-chat');
    text += chunk.choices[0]?.delta.content ?? '';
  }
  t.is(text, FAKE_ANSWER, 'a timed-out upstream falls back too');
});

/** Opens a slow stream, reads four chunks (the upstream then goes silent for 2 s), disconnects; ms until the upstream saw its request closed. */
async function disconnectMidStream(t: ExecutionContext): Promise<number> {
  const controller = new AbortController();
  const seen = harness.fake.nextRequest('slow-a');
  const response = await postJson(
    harness.svc,
    '/v1/chat/completions',
    { model: 'slow-a', messages: [{ role: 'user', content: 'hi' }], stream: true },
    { signal: controller.signal },
  );
  const reader = response.body!.getReader();
  let received = '';
  while (!received.includes('w3 ')) received += new TextDecoder().decode((await reader.read()).value);
  const upstreamRequest = await seen;
  const abortedAt = performance.now();
  controller.abort();
  await waitUntil('the upstream to see its request closed', () => upstreamRequest.abortedAt !== undefined, { timeoutMs: 3000 });
  t.is(upstreamRequest.finishedAt, undefined, 'the upstream never finished its answer');
  return upstreamRequest.abortedAt! - abortedAt;
}

test('a client that disconnects mid-stream aborts the upstream request within 100 ms', async (t) => {
  // The upstream is silent when the client leaves, so only svc noticing the disconnect itself
  // (not a failed write at the next chunk, 2 s later) can close the upstream request in time.
  // This machine's CPUs are shared: the best of up to three disconnects is held to 100 ms, and
  // every one to well under the silence.
  const delays: number[] = [];
  while (delays.length < 3 && !delays.some((delay) => delay < 100)) delays.push(await disconnectMidStream(t));
  t.log(`upstream closed ${delays.map((delay) => delay.toFixed(1)).join(', ')} ms after the client left`);
  t.true(Math.min(...delays) < 100);
  t.true(delays.every((delay) => delay < 1000));
  await waitUntil('the partial usage of the disconnected stream', () =>
    harness.usage.some((event) => event.model === 'slow-a' && event.errorCode === 'client_disconnected' && (event.usage.completion_tokens ?? 0) > 0),
  );
});

test('silences carry SSE keep-alive comments', async (t) => {
  const response = await postJson(harness.svc, '/v1/chat/completions', { model: 'pause-a', messages: [{ role: 'user', content: 'hi' }], stream: true });
  const text = await response.text();
  t.true(text.includes('\n\n: keep-alive\n\n'), 'a keep-alive comment during the 600 ms pause (keep-alive 40 ms)');
  const data = sseData(text) as Array<{ choices?: Array<{ delta: { content?: string } }> } | string>;
  t.is(
    data.map((chunk) => (typeof chunk === 'string' ? '' : (chunk.choices?.[0]?.delta.content ?? ''))).join(''),
    FAKE_ANSWER,
    'the comments do not disturb the chunks',
  );
});

test('an unknown model is a 422 listing the known chat models', async (t) => {
  const response = await postJson(harness.svc, '/v1/chat/completions', { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
  t.is(response.status, 422);
  const body = (await response.json()) as { code: string; error: string };
  t.is(body.code, 'model_not_found');
  for (const id of ['answer-a', 'flaky-chat', 'backup-chat']) t.true(body.error.includes(id), `lists ${id}`);
  const error = await t.throwsAsync(openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }));
  t.is((error as { status?: number }).status, 422);
});

test('a request the upstream refuses (400) is a 422 upstream_rejected_request with its message, not a fallback', async (t) => {
  const response = await postJson(harness.svc, '/v1/chat/completions', { model: 'refuse-a', messages: [{ role: 'user', content: 'hi' }], stream: true });
  t.is(response.status, 422);
  const body = (await response.json()) as { code: string; error: string };
  t.is(body.code, 'upstream_rejected_request');
  t.regex(body.error, /too hot/);
});

test("an upstream that refuses svc's key, or cannot be reached, is a 502 upstream_error naming it by id only", async (t) => {
  const locked = await postJson(harness.svc, '/v1/chat/completions', { model: 'locked-chat', messages: [{ role: 'user', content: 'hi' }] });
  t.is(locked.status, 502);
  const body = (await locked.json()) as { code: string; error: string; retryable?: boolean };
  t.is(body.code, 'upstream_error');
  t.is(body.error, 'Upstream "upstream" answered 401 (check its API key).');
  t.true(body.retryable);
  const unreachable = await postJson(harness.svc, '/v1/chat/completions', {
    model: 'unreachable-chat',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
  });
  t.is(unreachable.status, 502);
  t.regex(((await unreachable.json()) as { error: string }).error, /^Upstream "nowhere" could not be reached/);
});

test('an error answer whose body never ends is read up to 64 KiB, then closed: a 502 upstream_error, not a hang', async (t) => {
  // The body flows without a pause, so no idle deadline ends it: only svc's cap on error bodies does.
  t.timeout(20_000);
  const seen = harness.fake.nextRequest('endless-error-a');
  const response = await postJson(harness.svc, '/v1/chat/completions', { model: 'endless-error-a', messages: [{ role: 'user', content: 'hi' }], stream: true });
  t.is(response.status, 502);
  const body = (await response.json()) as { code: string; error: string };
  t.is(body.code, 'upstream_error');
  t.is(body.error, 'Upstream "upstream" answered 503.');
  const record = await seen;
  await waitUntil('svc to close the upstream request', () => record.abortedAt !== undefined);
});

test("the upstream's key appears in no answer and no log line", async (t) => {
  await postJson(harness.svc, '/v1/chat/completions', { model: 'locked-chat', messages: [{ role: 'user', content: 'hi' }] });
  await openai.chat.completions.create({ model: 'answer-a', messages: [{ role: 'user', content: 'hi' }] });
  await postJson(harness.svc, '/v1/chat/completions', { model: 'flaky-chat', messages: [{ role: 'user', content: 'hi' }] });
  const models = await (await fetch(`${harness.svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${harness.svc.operatorToken}` } })).text();
  t.true(models.includes('flaky-chat'));
  for (const secret of [UPSTREAM_SECRET, 'sk-second-upstream-secret-b71e09d3']) {
    t.false(models.includes(secret));
    t.false(harness.logs().includes(secret));
  }
  t.false(models.includes(harness.fake.origin), "nor the upstream's address");
  t.true(harness.logs().includes('trying the next fallback'), 'the log is there to be read');
});
