import { readFileSync } from 'node:fs';
import test from 'ava';
import type { ChatCompletion, ChatCompletionChunk, ResponseStreamEvent, ResponsesCreateBody } from '@svc/schemas';
import {
  ChatStreamTranslator,
  chatRequestFromResponses,
  normaliseInput,
  outcomeFromChatCompletion,
  placed,
  type ResponseFrame,
} from '../src/features/responses/translation/index.ts';
import { isServiceError } from '../src/service-error.ts';

/** A recorded chat stream: the chunks of its `data:` lines, `[DONE]` left out. */
function recorded(name: string): ChatCompletionChunk[] {
  const text = readFileSync(new URL(`./fixtures/responses/${name}`, import.meta.url), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as ChatCompletionChunk);
}

const frame = (body: ResponsesCreateBody = {}): ResponseFrame => ({
  id: 'resp_test',
  createdAt: 1_764_195_600,
  model: 'team-chat',
  body,
  previousResponseId: null,
  store: true,
  servedBy: { engine: 'openai', model: 'team-chat', method: 'neural' },
});

function translate(chunks: ChatCompletionChunk[]): ResponseStreamEvent[] {
  const translator = new ChatStreamTranslator(frame());
  const events: ResponseStreamEvent[] = [];
  translator.start(events);
  for (const chunk of chunks) translator.chunk(chunk, events);
  translator.finish(events);
  return events;
}

test("a text stream becomes OpenAI's event sequence, numbered from 0, with the usage and its details", (t) => {
  const events = translate(recorded('chat-text.sse'));
  t.deepEqual(
    events.map((event) => event.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  t.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
  );
  const done = events.find((event) => event.type === 'response.output_text.done') as unknown as { text: string; item_id: string; output_index: number };
  t.is(done.text, 'Paris is the capital of France.');
  t.is(done.output_index, 0);
  const completed = events.at(-1) as unknown as {
    response: { status: string; output: Array<{ id: string; type: string; content: Array<{ text: string }> }>; usage: Record<string, unknown> };
  };
  t.is(completed.response.status, 'completed');
  t.is(completed.response.output[0]!.id, done.item_id);
  t.is(completed.response.output[0]!.content[0]!.text, 'Paris is the capital of France.');
  t.deepEqual(completed.response.usage, {
    input_tokens: 14,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 7,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 21,
  });
  const created = events[0] as unknown as { response: { status: string; output: unknown[]; usage: unknown } };
  t.is(created.response.status, 'in_progress');
  t.deepEqual(created.response.output, []);
  t.is(created.response.usage, null);
});

test('two streamed tool calls become two function_call items, each closed before the next opens, arguments whole', (t) => {
  const events = translate(recorded('chat-tool-calls.sse'));
  t.deepEqual(
    events.map((event) => event.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  const completed = events.at(-1) as unknown as {
    response: { output: Array<Record<string, unknown>>; usage: { input_tokens_details: { cached_tokens: number } } };
  };
  t.like(completed.response.output[0], {
    type: 'function_call',
    call_id: 'call_Qm1rT7yXb2VzK9',
    name: 'get_weather',
    arguments: '{"city": "Paris"}',
    status: 'completed',
  });
  t.like(completed.response.output[1], {
    type: 'function_call',
    call_id: 'call_Zp4sU1aWc8XyL3',
    name: 'get_time',
    arguments: '{"tz": "Europe/Paris"}',
    status: 'completed',
  });
  t.is(completed.response.usage.input_tokens_details.cached_tokens, 64);
  const added = events.filter((event) => event.type === 'response.output_item.added') as unknown as Array<{
    output_index: number;
    item: { arguments: string; status: string };
  }>;
  t.deepEqual(
    added.map((event) => [event.output_index, event.item.arguments, event.item.status]),
    [
      [0, '', 'in_progress'],
      [1, '', 'in_progress'],
    ],
  );
});

test('a stream cut by max tokens ends response.incomplete with the reason', (t) => {
  const events = translate(recorded('chat-length.sse'));
  const last = events.at(-1) as unknown as { type: string; response: { status: string; incomplete_details: unknown; output: Array<{ status: string }> } };
  t.is(last.type, 'response.incomplete');
  t.is(last.response.status, 'incomplete');
  t.deepEqual(last.response.incomplete_details, { reason: 'max_output_tokens' });
  t.is(last.response.output[0]!.status, 'incomplete');
});

test('a failure mid-stream closes what was open and ends response.failed with the code', (t) => {
  const translator = new ChatStreamTranslator(frame());
  const events: ResponseStreamEvent[] = [];
  translator.start(events);
  for (const chunk of recorded('chat-text.sse').slice(0, 3)) translator.chunk(chunk, events);
  translator.fail('upstream_error', 'Upstream "openai" broke off the stream.', events);
  t.deepEqual(
    events.slice(-4).map((event) => event.type),
    ['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.failed'],
  );
  const failed = events.at(-1) as unknown as {
    response: { status: string; error: unknown; output: Array<{ status: string; content: Array<{ text: string }> }> };
  };
  t.is(failed.response.status, 'failed');
  t.deepEqual(failed.response.error, { code: 'upstream_error', message: 'Upstream "openai" broke off the stream.' });
  t.is(failed.response.output[0]!.content[0]!.text, 'Paris is the capital');
  t.is(failed.response.output[0]!.status, 'incomplete');
});

test('a tool call resumed after the next one began is refused as an upstream error, not misplaced', (t) => {
  const chunks = recorded('chat-tool-calls.sse');
  const late = structuredClone(chunks[1]!);
  const translator = new ChatStreamTranslator(frame());
  const events: ResponseStreamEvent[] = [];
  for (const chunk of chunks.slice(0, 5)) translator.chunk(chunk, events);
  const error = t.throws(() => translator.chunk(late, events));
  t.true(isServiceError(error) && error.code === 'upstream_error');
});

test('a JSON completion with text and a tool call becomes a message item and a function_call item', (t) => {
  const completion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Let me check.',
          refusal: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
  } as unknown as ChatCompletion;
  const outcome = outcomeFromChatCompletion(completion);
  t.is(outcome.status, 'completed');
  t.like(outcome.output[0], {
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }],
  });
  t.like(outcome.output[1], { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' });
  t.like(outcome.usage, { input_tokens: 5, output_tokens: 9, total_tokens: 14 });
});

const text = { images: false };

test('a request becomes the chat request: instructions first, calls joined to the assistant message, tool outputs as tool messages', (t) => {
  const body: ResponsesCreateBody = {
    model: 'team-chat',
    instructions: 'Be brief.',
    input: [
      { role: 'user', content: 'Weather in Oslo?' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'call_1', output: '{"temp":3}' },
    ],
    tools: [
      {
        type: 'function',
        name: 'get_weather',
        description: 'Weather by city',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
        strict: true,
      },
    ],
    tool_choice: { type: 'function', name: 'get_weather' },
    parallel_tool_calls: false,
    text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
    temperature: 0.2,
    top_p: 0.9,
    max_output_tokens: 300,
    store: true,
    metadata: { team: 'a' },
  };
  const chat = chatRequestFromResponses(body, placed([], normaliseInput(body.input)), text, true) as unknown as Record<string, unknown>;
  t.deepEqual(chat.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Oslo?' },
    {
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '{"temp":3}' },
  ]);
  t.deepEqual(chat.tools, [
    {
      type: 'function',
      function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true },
    },
  ]);
  t.deepEqual(chat.tool_choice, { type: 'function', function: { name: 'get_weather' } });
  t.is(chat.parallel_tool_calls, false);
  t.deepEqual(chat.response_format, { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } });
  t.like(chat, { temperature: 0.2, top_p: 0.9, max_tokens: 300, stream: true, stream_options: { include_usage: true } });
  t.false('metadata' in chat || 'store' in chat);
});

function refusal(t: import('ava').ExecutionContext, body: ResponsesCreateBody, code: string, field: string, abilities = text) {
  const error = t.throws(() => chatRequestFromResponses(body, placed([], normaliseInput(body.input)), abilities, false));
  t.true(isServiceError(error), String(error));
  if (!isServiceError(error)) return;
  t.is(error.code, code);
  t.is(error.status, 400);
  t.true(error.message.startsWith(`${field}:`), error.message);
}

test('what chat cannot express is a 400 naming the field', (t) => {
  refusal(t, { input: 'hi', tools: [{ type: 'function', name: 'f' }, { type: 'web_search_preview' }] }, 'responses_tool_unsupported', 'tools[1].type');
  refusal(t, { input: 'hi', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }, 'responses_tool_unsupported', 'tools[0].type');
  refusal(t, { input: 'hi', tools: [{ type: 'code_interpreter' }] }, 'responses_tool_unsupported', 'tools[0].type');
  refusal(t, { input: 'hi', tools: [{ type: 'computer_use_preview' }] }, 'responses_tool_unsupported', 'tools[0].type');
  refusal(
    t,
    {
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'see' },
            { type: 'input_image', image_url: 'https://example.com/a.png' },
          ],
        },
      ],
    },
    'responses_input_unsupported',
    'input[0].content[1].type',
  );
  refusal(t, { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }] }, 'responses_input_unsupported', 'input[0].content[0].type', {
    images: true,
  });
  refusal(t, { input: [{ type: 'item_reference', id: 'msg_1' }] }, 'responses_input_unsupported', 'input[0].type');
  refusal(t, { input: 'hi', include: ['reasoning.encrypted_content'] }, 'responses_parameter_unsupported', 'include');
  refusal(t, { input: 'hi', truncation: 'auto' } as ResponsesCreateBody, 'responses_parameter_unsupported', 'truncation');
  refusal(t, { input: 'hi', conversation: 'conv_1' } as ResponsesCreateBody, 'responses_parameter_unsupported', 'conversation');
  refusal(t, { input: 'hi', text: { format: { type: 'grammar' } } }, 'responses_parameter_unsupported', 'text.format.type');
});

test('an image goes to a chat engine that takes images as an image_url part', (t) => {
  const body: ResponsesCreateBody = {
    input: [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is this?' },
          { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
        ],
      },
    ],
  };
  const chat = chatRequestFromResponses(body, placed([], normaliseInput(body.input)), { images: true }, false) as unknown as { messages: unknown[] };
  t.deepEqual(chat.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
      ],
    },
  ]);
});

test('null and empty fields the SDKs send are not refusals', (t) => {
  const body = {
    input: 'hi',
    include: [],
    conversation: null,
    prompt: null,
    truncation: 'disabled',
    tools: [],
    prompt_cache_retention: null,
    reasoning: null,
  } as ResponsesCreateBody;
  t.notThrows(() => chatRequestFromResponses(body, placed([], normaliseInput(body.input)), text, false));
});

test("a text delta's JSON as written on the wire is the event itself", async (t) => {
  const { encodeSse } = await import('../src/http/sse.ts');
  const translator = new ChatStreamTranslator(frame());
  const events: ResponseStreamEvent[] = [];
  const chunk = {
    ...recorded('chat-text.sse')[1]!,
    choices: [{ index: 0, delta: { content: 'quote " backslash \\ newline \n é 😀' }, finish_reason: null }],
  } as ChatCompletionChunk;
  translator.chunk(chunk, events);
  const delta = events.find((event) => event.type === 'response.output_text.delta')!;
  const line = encodeSse({ event: delta.type, data: delta });
  t.deepEqual(
    JSON.parse(
      line
        .split('\n')
        .find((row) => row.startsWith('data: '))!
        .slice(6),
    ),
    JSON.parse(JSON.stringify(delta)),
  );
});
