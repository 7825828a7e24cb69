import test from 'ava';
import OpenAI from 'openai';
import { FAKE_ANSWER, FAKE_RESPONSES_ANSWER, FAKE_TOOL_ARGUMENTS, toolAnswer } from '@svc/testing/fake-openai-upstream';
import { signInAgent } from '@svc/testing/identity';
import { postJson, sseData, startUpstreamHarness, UPSTREAM_SECRET, type UpstreamHarness } from './helpers/inference-upstream-setup.ts';
import { waitUntil } from '@svc/testing/wait-until';

let harness: UpstreamHarness;
let openai: OpenAI;

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

test.before(async () => {
  harness = await startUpstreamHarness({ modelList: 'answer-a,tool-a,midstream-error-a,slow-a,openai-resp=chat+responses,truncated-resp=chat+responses' });
  openai = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
});
test.after.always(async () => {
  await harness?.close();
});

test.serial('responses.create over an upstream chat model: translated to chat and back, usage in Responses names', async (t) => {
  const response = await openai.responses.create({ model: 'answer-a', instructions: 'Be brief.', input: 'Say hello.' });
  t.regex(response.id, /^resp_[0-9a-f]{48}$/);
  t.is(response.object, 'response');
  t.is(response.status, 'completed');
  t.is(response.model, 'answer-a');
  t.is(response.output_text, FAKE_ANSWER);
  t.like(response.output[0], { type: 'message', role: 'assistant', status: 'completed' });
  t.true(response.usage!.input_tokens > 0);
  t.is(response.usage!.total_tokens, response.usage!.input_tokens + response.usage!.output_tokens);
  const sent = harness.fake.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)!;
  t.deepEqual(sent.body.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Say hello.' },
  ]);
  t.is(sent.authorization, `Bearer ${UPSTREAM_SECRET}`);
  t.like(harness.usage.at(-1), { operation: 'responses', model: 'answer-a', ok: true });
});

test.serial('responses.create over the built-in engine answers through the same translation', async (t) => {
  const response = await openai.responses.create({ model: 'svc-extractive-chat', input: 'How do I post on the blackboard?' });
  t.is(response.status, 'completed');
  t.true(response.output_text.length > 0);
  t.like((response as unknown as { svc: unknown }).svc, { engine: 'builtin', model: 'svc-extractive-chat', method: 'classical' });
});

test.serial('a Responses request naming no model is served by the model /v1/models lists as its default', async (t) => {
  // openai-resp is declared chat+responses, but no default for responses is: chat's default
  // (the built-in engine) serves a request naming no model, translated, and the list says so.
  const listed = (await fetch(`${harness.svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${harness.svc.operatorToken}` } }).then((answer) =>
    answer.json(),
  )) as { data: Array<{ id: string; default_for: string[] }> };
  const defaults = listed.data.filter((model) => model.default_for.includes('responses')).map((model) => model.id);
  t.deepEqual(defaults, ['svc-extractive-chat']);
  const response = await openai.responses.create({ input: 'How do I post on the blackboard?' } as Parameters<typeof openai.responses.create>[0] & {
    stream?: false;
  });
  t.is(response.status, 'completed');
  t.is(response.model, defaults[0]);
});

test.serial("a streamed response arrives as OpenAI's event sequence, numbered, ending response.completed", async (t) => {
  const stream = await openai.responses.create({ model: 'answer-a', input: 'Say hello.', stream: true });
  const events = [];
  for await (const event of stream) events.push(event);
  t.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
  );
  const types = events.map((event) => event.type);
  t.deepEqual(types.slice(0, 4), ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
  t.deepEqual(types.slice(-4), ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
  const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
  t.is(deltas.join(''), FAKE_ANSWER);
  const completed = events.at(-1)!;
  if (completed.type !== 'response.completed') return t.fail();
  t.true(completed.response.usage!.total_tokens > 0);
  // The openai client's own stream helper assembles the same answer.
  const final = await openai.responses.stream({ model: 'answer-a', input: 'Say hello.' }).finalResponse();
  t.is(final.output_text, FAKE_ANSWER);
});

test.serial('a function tool round trip: the call, then function_call_output through previous_response_id', async (t) => {
  const first = await openai.responses.create({ model: 'tool-a', input: 'Weather in Paris?', tools: [weatherTool] });
  const call = first.output.find((item) => item.type === 'function_call');
  if (call?.type !== 'function_call') return t.fail('no function call');
  t.is(call.name, 'get_weather');
  t.is(call.arguments, FAKE_TOOL_ARGUMENTS);
  const second = await openai.responses.create({
    model: 'tool-a',
    previous_response_id: first.id,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp":21}' }],
    tools: [weatherTool],
  });
  t.is(second.output_text, toolAnswer('{"temp":21}'));
  t.is(second.previous_response_id, first.id);
  const sent = harness.fake.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)!;
  t.deepEqual(sent.body.messages, [
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: call.call_id, type: 'function', function: { name: 'get_weather', arguments: FAKE_TOOL_ARGUMENTS } }],
    },
    { role: 'tool', tool_call_id: call.call_id, content: '{"temp":21}' },
  ]);
  // Streamed: the call's arguments arrive as deltas and whole in the done event.
  const stream = await openai.responses.create({ model: 'tool-a', input: 'Weather in Paris?', tools: [weatherTool], stream: true });
  const events = [];
  for await (const event of stream) events.push(event);
  t.is(
    events
      .filter((event) => event.type === 'response.function_call_arguments.delta')
      .map((event) => (event.type === 'response.function_call_arguments.delta' ? event.delta : ''))
      .join(''),
    FAKE_TOOL_ARGUMENTS,
  );
  t.like(
    events.find((event) => event.type === 'response.function_call_arguments.done'),
    { arguments: FAKE_TOOL_ARGUMENTS },
  );
});

test.serial('retrieve, inputItems.list (paged both ways) and delete; then 404', async (t) => {
  const input = Array.from({ length: 5 }, (_, index) => ({ role: 'user' as const, content: `message ${index}` }));
  const created = await openai.responses.create({ model: 'answer-a', input, metadata: { ticket: 'T-1' } });
  const retrieved = await openai.responses.retrieve(created.id);
  t.is(retrieved.id, created.id);
  t.is(retrieved.output_text, FAKE_ANSWER);
  t.deepEqual(retrieved.metadata, { ticket: 'T-1' });
  const newestFirst = [];
  for await (const item of openai.responses.inputItems.list(created.id, { limit: 2 })) newestFirst.push(item);
  t.deepEqual(
    newestFirst.map((item) => (item.type === 'message' && item.content[0]?.type === 'input_text' ? item.content[0].text : '')),
    ['message 4', 'message 3', 'message 2', 'message 1', 'message 0'],
  );
  const oldestFirst = await openai.responses.inputItems.list(created.id, { order: 'asc', limit: 3 });
  t.is(oldestFirst.data.length, 3);
  t.true(oldestFirst.has_more);
  // svc's own client walks the same pages from the contract's paging declaration.
  const walked = [];
  for await (const item of harness.svc.operator.responses.inputItems.all({ params: { response_id: created.id }, query: { order: 'asc', limit: 2 } }))
    walked.push(item.id);
  t.deepEqual(
    walked,
    [...newestFirst].reverse().map((item) => item.id),
  );
  await openai.responses.delete(created.id);
  const gone = await t.throwsAsync(openai.responses.retrieve(created.id));
  t.is((gone as InstanceType<typeof OpenAI.APIError>).status, 404);
  const viaSvc = await t.throwsAsync(harness.svc.operator.responses.retrieve({ params: { response_id: created.id } }));
  t.is((viaSvc as unknown as { code: string }).code, 'response_not_found');
  await t.throwsAsync(openai.responses.delete(created.id), { instanceOf: OpenAI.NotFoundError });
});

test.serial('a stored response belongs to its principal: another one gets 404 for it and for previous_response_id', async (t) => {
  const created = await openai.responses.create({ model: 'answer-a', input: 'mine' });
  const agent = await signInAgent(harness.svc, 'inference:invoke');
  const theirs = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: agent.session.accessToken, maxRetries: 0 });
  await t.throwsAsync(theirs.responses.retrieve(created.id), { instanceOf: OpenAI.NotFoundError });
  await t.throwsAsync(theirs.responses.inputItems.list(created.id), { instanceOf: OpenAI.NotFoundError });
  await t.throwsAsync(theirs.responses.delete(created.id), { instanceOf: OpenAI.NotFoundError });
  await t.throwsAsync(theirs.responses.create({ model: 'answer-a', input: 'go on', previous_response_id: created.id }), { instanceOf: OpenAI.NotFoundError });
  await t.throwsAsync(openai.responses.create({ model: 'answer-a', input: 'go on', previous_response_id: 'resp_unknown' }), {
    instanceOf: OpenAI.NotFoundError,
  });
  t.is((await openai.responses.retrieve(created.id)).id, created.id);
});

test.serial('store: false keeps nothing', async (t) => {
  const response = await openai.responses.create({ model: 'answer-a', input: 'forget me', store: false });
  t.false((response as unknown as { store: boolean }).store);
  await t.throwsAsync(openai.responses.retrieve(response.id), { instanceOf: OpenAI.NotFoundError });
  const row = (await harness.svc.server.deps.database.sequelize.query('SELECT count(*)::int AS n FROM responses WHERE id = :id', {
    replacements: { id: response.id },
    plain: true,
  })) as { n: number } | null;
  t.is(row?.n, 0);
});

test.serial('retention: kept until 30 days after creation, gone at 30 days', async (t) => {
  const response = await openai.responses.create({ model: 'answer-a', input: 'keep me' });
  const sequelize = harness.svc.server.deps.database.sequelize;
  const age = (interval: string) =>
    sequelize.query(`UPDATE responses SET created_at = clock_timestamp() - interval '${interval}' WHERE id = :id`, { replacements: { id: response.id } });
  await age('30 days');
  await t.throwsAsync(openai.responses.retrieve(response.id), { instanceOf: OpenAI.NotFoundError });
  await age('30 days - 5 seconds');
  t.is((await openai.responses.retrieve(response.id)).id, response.id);
  await age('30 days 1 second');
  await t.throwsAsync(openai.responses.retrieve(response.id), { instanceOf: OpenAI.NotFoundError });
  await t.throwsAsync(openai.responses.create({ model: 'answer-a', input: 'go on', previous_response_id: response.id }), { instanceOf: OpenAI.NotFoundError });
});

test.serial('a stored conversation past 8 MiB is refused by name before it is read', async (t) => {
  const response = await openai.responses.create({ model: 'answer-a', input: 'start' });
  const sequelize = harness.svc.server.deps.database.sequelize;
  // 9 items of 1 MiB: what a long chain of large requests would have stored.
  await sequelize.query(
    "UPDATE responses SET context = (SELECT jsonb_agg(jsonb_build_object('id', 'msg_' || n, 'type', 'message', 'role', 'user', 'content', repeat('x', 1048576))) FROM generate_series(1, 9) AS n) WHERE id = :id",
    { replacements: { id: response.id } },
  );
  const answer = await postJson(harness.svc, '/v1/responses', { model: 'answer-a', input: 'go on', previous_response_id: response.id });
  t.is(answer.status, 400);
  const error = (await answer.json()) as { code: string; error: string };
  t.is(error.code, 'responses_input_unsupported');
  t.true(error.error.startsWith('previous_response_id: the stored conversation holds'), error.error);
});

test.serial('what svc cannot serve is a 400 naming the field, with a stable code', async (t) => {
  const cases: Array<[Record<string, unknown>, string, string]> = [
    [{ model: 'answer-a', input: 'hi', tools: [{ type: 'web_search_preview' }] }, 'responses_tool_unsupported', 'tools[0].type'],
    // A background response is always kept, to be polled (responses-background.test.ts serves the rest).
    [{ model: 'answer-a', input: 'hi', background: true, store: false }, 'responses_parameter_unsupported', 'store'],
    [
      { model: 'svc-extractive-chat', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }] },
      'responses_input_unsupported',
      'input[0].content[0].type',
    ],
    [{ model: 'openai-resp', input: 'hi', background: true, store: false }, 'responses_parameter_unsupported', 'store'],
  ];
  for (const [body, code, field] of cases) {
    const answer = await postJson(harness.svc, '/v1/responses', body);
    t.is(answer.status, 400);
    const error = (await answer.json()) as { code: string; error: string; detail: Array<{ loc: unknown[] }> };
    t.is(error.code, code);
    t.true(error.error.startsWith(`${field}:`), error.error);
  }
});

test.serial('an upstream failure after the stream started ends it with response.failed carrying the code', async (t) => {
  const answer = await postJson(harness.svc, '/v1/responses', { model: 'midstream-error-a', input: 'hi', stream: true });
  t.is(answer.status, 200);
  const events = sseData(await answer.text()) as Array<{ type: string; sequence_number: number; response?: { status: string; error: { code: string } } }>;
  const last = events.at(-1)!;
  t.is(last.type, 'response.failed');
  t.is(last.response!.status, 'failed');
  t.is(last.response!.error.code, 'upstream_error');
  t.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
  );
  t.like(harness.usage.at(-1), { operation: 'responses', ok: false, errorCode: 'upstream_error' });
});

test.serial('a client that leaves a translated stream aborts the upstream at once, and the partial usage is reported', async (t) => {
  const controller = new AbortController();
  const seen = harness.fake.nextRequest('slow-a');
  const answer = await postJson(harness.svc, '/v1/responses', { model: 'slow-a', input: 'hi', stream: true }, { signal: controller.signal });
  const reader = answer.body!.getReader();
  let received = '';
  // After its fourth chunk the upstream is silent for 2 s: only svc noticing the client leave closes it sooner.
  while (!received.includes('"delta":"w3 "')) received += new TextDecoder().decode((await reader.read()).value);
  const upstream = await seen;
  const leftAt = performance.now();
  controller.abort();
  await waitUntil('the upstream to see its request closed', () => upstream.abortedAt !== undefined, { timeoutMs: 1500 });
  t.true(upstream.abortedAt! - leftAt < 1000);
  t.is(upstream.finishedAt, undefined);
  await waitUntil('a responses usage event with client_disconnected', () =>
    harness.usage.some((event) => event.operation === 'responses' && event.model === 'slow-a' && event.errorCode === 'client_disconnected'),
  );
});

test.serial('a model declared with the capability responses gets the request passed through, svc keeping the conversation', async (t) => {
  const first = await openai.responses.create({ model: 'openai-resp', input: 'Hello?', store: true });
  t.is(first.output_text, FAKE_RESPONSES_ANSWER);
  t.is(first.model, 'openai-resp');
  t.regex(first.id, /^resp_[0-9a-f]{48}$/);
  const sent = harness.fake.requests.filter((request) => request.path === '/v1/responses').at(-1)!;
  t.is(sent.body.model, 'openai-resp');
  t.is(sent.body.store, false);
  t.is(sent.authorization, `Bearer ${UPSTREAM_SECRET}`);
  t.like(harness.usage.at(-1), {
    operation: 'responses',
    model: 'openai-resp',
    ok: true,
    usage: { prompt_tokens: 25, completion_tokens: 12, total_tokens: 37 },
  });
  // Streamed, continuing the first: the stored conversation is sent as input, without previous_response_id.
  const stream = await openai.responses.create({
    model: 'openai-resp',
    input: [{ role: 'user', content: 'And again?' }],
    previous_response_id: first.id,
    tools: [weatherTool],
    stream: true,
  });
  const events = [];
  for await (const event of stream) events.push(event);
  const continued = harness.fake.requests.filter((request) => request.path === '/v1/responses').at(-1)!;
  t.false('previous_response_id' in continued.body);
  t.deepEqual(
    (continued.body.input as Array<{ type: string; role?: string }>).map((item) => `${item.type}:${item.role ?? ''}`),
    ['message:user', 'message:assistant', 'message:user'],
  );
  const completed = events.at(-1)!;
  if (completed.type !== 'response.completed') return t.fail(completed.type);
  t.is(completed.response.model, 'openai-resp');
  t.is(completed.response.previous_response_id, first.id);
  t.like(completed.response.output[0], { type: 'function_call', name: 'get_weather' });
  t.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
  );
  t.is((await openai.responses.retrieve(completed.response.id)).id, completed.response.id);
});

test.serial('background: true on a passed-through model answers at once and is polled to completed; its stream resumes after event N', async (t) => {
  const created = await openai.responses.create({ model: 'openai-resp', input: 'Hello in the background?', background: true });
  t.like(created, { background: true, model: 'openai-resp' });
  t.true(created.status === 'queued' || created.status === 'in_progress', created.status);
  const done = await waitUntil(
    () => `${created.id} to end`,
    async () => {
      const polled = await openai.responses.retrieve(created.id);
      return polled.status !== 'queued' && polled.status !== 'in_progress' && polled;
    },
    { timeoutMs: 20_000, intervalMs: 50 },
  );
  t.like(done, { id: created.id, status: 'completed', background: true, output_text: FAKE_RESPONSES_ANSWER });
  // svc runs the task itself, streaming from the upstream: the upstream is not asked to keep it.
  const sent = harness.fake.requests
    .filter((request) => request.path === '/v1/responses' && JSON.stringify(request.body.input).includes('in the background'))
    .at(-1)!;
  t.true(sent.body.stream === true && sent.body.store === false && !sent.body.background, JSON.stringify({ stream: sent.body.stream, store: sent.body.store }));
  const all = await (
    await fetch(`${harness.svc.baseUrl}/v1/responses/${created.id}?stream=true`, { headers: { authorization: `Bearer ${harness.svc.operatorToken}` } })
  ).text();
  const events = sseData(all) as Array<{ type: string; sequence_number: number }>;
  t.is(events.at(-1)?.type, 'response.completed');
  const rest = await (
    await fetch(`${harness.svc.baseUrl}/v1/responses/${created.id}?stream=true&starting_after=1`, {
      headers: { authorization: `Bearer ${harness.svc.operatorToken}` },
    })
  ).text();
  t.deepEqual(
    (sseData(rest) as Array<{ sequence_number: number }>).map((event) => event.sequence_number),
    events.slice(2).map((event) => event.sequence_number),
  );
});

test.serial('a passed-through stream that breaks off ends with response.failed, numbered after the last event, and is counted as failed', async (t) => {
  const answer = await postJson(harness.svc, '/v1/responses', { model: 'truncated-resp', input: 'hi', stream: true });
  t.is(answer.status, 200);
  const events = sseData(await answer.text()) as Array<{
    type: string;
    sequence_number: number;
    response?: { id: string; model: string; status: string; error: { code: string } };
  }>;
  t.deepEqual(
    events.map((event) => event.type),
    ['response.created', 'response.in_progress', 'response.failed'],
  );
  t.deepEqual(
    events.map((event) => event.sequence_number),
    [0, 1, 2],
  );
  const failed = events.at(-1)!.response!;
  t.like(failed, { status: 'failed', model: 'truncated-resp', error: { code: 'upstream_error' } });
  t.regex(failed.id, /^resp_[0-9a-f]{48}$/);
  t.like(harness.usage.at(-1), { operation: 'responses', model: 'truncated-resp', ok: false, errorCode: 'upstream_error' });
  // Stored as it ended, as OpenAI keeps failed responses.
  t.is((await openai.responses.retrieve(failed.id)).status, 'failed');
});
