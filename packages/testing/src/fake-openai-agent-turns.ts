import type { ServerResponse } from 'node:http';

/**
 * The fake upstream's scripted agent models, in OpenAI's exact wire formats: a model that calls
 * the first function tool it is given, then answers with what the tool returned. Served two ways:
 *
 * - Chat Completions for `tool-*` models (JSON, or SSE chunks with the arguments split over
 *   several chunks, the usage chunk when asked, `[DONE]`);
 * - the Responses API at `/v1/responses` for any model (JSON Response objects, or the event
 *   sequence with `sequence_number`, ending at `response.completed` with no `[DONE]`), which is
 *   what an upstream that speaks Responses (OpenAI itself) sends; a `truncated-*` model's stream
 *   ends after `response.in_progress`, as a broken upstream's would.
 */
export const FAKE_TOOL_ARGUMENTS = '{"city":"Paris"}';
export const FAKE_RESPONSES_ANSWER = 'Hello from the fake Responses upstream.';
export const toolAnswer = (output: string) => `The tool said: ${output}`;

type Step = { call: { name: string; callId: string; arguments: string } } | { text: string };
const created = 1_700_000_000;

function functionName(tools: unknown): string | undefined {
  if (!Array.isArray(tools)) return undefined;
  const tool = tools.find((entry: { type?: unknown }) => entry?.type === 'function') as { name?: unknown; function?: { name?: unknown } } | undefined;
  const name = tool?.name ?? tool?.function?.name;
  return typeof name === 'string' ? name : undefined;
}

const text = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : Array.isArray(value)
      ? value.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('')
      : '';

/** Chat: call the tool unless the last message is its result. */
function chatStep(body: Record<string, unknown>, fallback: string): Step {
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ role?: unknown; content?: unknown }>) : [];
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: toolAnswer(text(last.content)) };
  const name = functionName(body.tools);
  return name ? { call: { name, callId: `call_fake_${messages.length}`, arguments: FAKE_TOOL_ARGUMENTS } } : { text: fallback };
}

/** Responses: call the tool unless the last input item is its result. */
function responsesStep(body: Record<string, unknown>): Step {
  const input = Array.isArray(body.input) ? (body.input as Array<{ type?: unknown; output?: unknown }>) : [];
  const last = input.at(-1);
  if (last?.type === 'function_call_output') return { text: toolAnswer(text(last.output)) };
  const name = functionName(body.tools);
  return name ? { call: { name, callId: `call_fake_${input.length}`, arguments: FAKE_TOOL_ARGUMENTS } } : { text: FAKE_RESPONSES_ANSWER };
}

const pieces = (value: string, size: number) =>
  Array.from({ length: Math.ceil(value.length / size) }, (_, index) => value.slice(index * size, (index + 1) * size));

export function fakeToolChat(body: Record<string, unknown>, response: ServerResponse, fallback: string): void {
  const model = String(body.model);
  const id = `chatcmpl-fake-tool`;
  const step = chatStep(body, fallback);
  const usage = {
    prompt_tokens: 20,
    completion_tokens: 10,
    total_tokens: 30,
    prompt_tokens_details: { cached_tokens: 4 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
  if (!body.stream) {
    const message =
      'call' in step
        ? {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [{ id: step.call.callId, type: 'function', function: { name: step.call.name, arguments: step.call.arguments } }],
          }
        : { role: 'assistant', content: step.text, refusal: null };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        system_fingerprint: 'fp_fake',
        choices: [{ index: 0, message, logprobs: null, finish_reason: 'call' in step ? 'tool_calls' : 'stop' }],
        usage,
      }),
    );
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const send = (delta: Record<string, unknown>, finish: string | null) =>
    response.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`,
    );
  if ('call' in step) {
    send(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: step.call.callId, type: 'function', function: { name: step.call.name, arguments: '' } }],
        refusal: null,
      },
      null,
    );
    for (const piece of pieces(step.call.arguments, 4)) send({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null);
    send({}, 'tool_calls');
  } else {
    send({ role: 'assistant', content: '', refusal: null }, null);
    for (const piece of step.text.split(/(?<= )/)) send({ content: piece }, null);
    send({}, 'stop');
  }
  if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage)
    response.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake', choices: [], usage })}\n\n`);
  response.write('data: [DONE]\n\n');
  response.end();
}

export function fakeResponses(body: Record<string, unknown>, response: ServerResponse): void {
  const model = String(body.model);
  const id = 'resp_fake_upstream';
  const step = responsesStep(body);
  const usage = {
    input_tokens: 25,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 12,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 37,
  };
  const item =
    'call' in step
      ? { id: 'fc_fake_1', type: 'function_call', status: 'completed', arguments: step.call.arguments, call_id: step.call.callId, name: step.call.name }
      : {
          id: 'msg_fake_1',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: step.text }],
        };
  const snapshot = (status: string, output: unknown[]) => ({
    id,
    object: 'response',
    created_at: created,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: `${model}-2025-01-01`,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: status === 'completed' ? usage : null,
    user: null,
    metadata: {},
  });
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(snapshot('completed', [item])));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  let sequence = 0;
  const send = (event: Record<string, unknown> & { type: string }) =>
    response.write(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence++ })}\n\n`);
  send({ type: 'response.created', response: snapshot('in_progress', []) });
  send({ type: 'response.in_progress', response: snapshot('in_progress', []) });
  if (model.startsWith('truncated-')) {
    // A broken upstream: the body ends before any final event.
    response.end();
    return;
  }
  if ('call' in step) {
    send({ type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } });
    for (const piece of pieces(step.call.arguments, 4))
      send({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: 0, delta: piece, obfuscation: 'xY' });
    send({ type: 'response.function_call_arguments.done', item_id: item.id, output_index: 0, arguments: step.call.arguments });
  } else {
    send({ type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    send({
      type: 'response.content_part.added',
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
    });
    for (const piece of step.text.split(/(?<= )/))
      send({ type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: piece, logprobs: [], obfuscation: 'q' });
    send({ type: 'response.output_text.done', item_id: item.id, output_index: 0, content_index: 0, text: step.text, logprobs: [] });
    send({
      type: 'response.content_part.done',
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', annotations: [], logprobs: [], text: step.text },
    });
  }
  send({ type: 'response.output_item.done', output_index: 0, item });
  send({ type: 'response.completed', response: snapshot('completed', [item]) });
  response.end();
}
