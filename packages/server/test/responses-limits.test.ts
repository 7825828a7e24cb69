import test from 'ava';
import OpenAI from 'openai';
import { inferenceLimits, responsesLimits } from '@svc/schemas';
import { postJson, startUpstreamHarness, type UpstreamHarness } from './helpers/inference-upstream-setup.ts';
import { measureLoopHold } from './helpers/loop-hold.ts';

/**
 * A Responses request is held to the limits of the operation that serves it: answered through
 * Chat Completions (the built-in engine, an upstream chat model), it takes chat's input caps
 * before any engine runs; passed through, the stored conversation it continues and adds to is
 * capped, and it may not name the upstream's stored objects. Each limit is tried at its edge.
 */
let harness: UpstreamHarness;
let openai: OpenAI;

test.before(async () => {
  harness = await startUpstreamHarness({ modelList: 'answer-a,openai-resp=chat+responses' });
  openai = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
});
test.after.always(async () => {
  await harness?.close();
});

const upstreamCalls = () => harness.fake.requests.filter((request) => request.path.startsWith('/v1/')).length;

/** A refused create, as sent on the wire (the openai client keeps the status and message but not svc's `code`). */
async function refusal(body: Record<string, unknown>): Promise<{ status: number; code: string; message: string }> {
  const answer = await postJson(harness.svc, '/v1/responses', body);
  const error = (await answer.json()) as { code?: string; error?: string };
  return { status: answer.status, code: String(error.code), message: String(error.error) };
}

const userMessage = (text: string, id?: string) => ({ type: 'message' as const, role: 'user' as const, content: text, ...(id ? { id } : {}) });

test.serial('one input message is held to chat characters a message: the cap passes, one more is 422 before any engine runs, as on chat', async (t) => {
  const cap = inferenceLimits.chatMaxMessageChars;
  const served = await openai.responses.create({ model: 'answer-a', input: 'x'.repeat(cap) });
  t.is(served.status, 'completed');
  const before = upstreamCalls();
  const refused = await refusal({ model: 'answer-a', input: 'x'.repeat(cap + 1) });
  const chat = await postJson(harness.svc, '/v1/chat/completions', { model: 'answer-a', messages: [{ role: 'user', content: 'x'.repeat(cap + 1) }] });
  t.like(refused, { status: chat.status, code: ((await chat.json()) as { code: string }).code });
  t.like(refused, { status: 422, code: 'validation_failed' });
  t.is(upstreamCalls(), before, 'no engine was called for the refused request');
});

test.serial('the built-in engine refuses a 4 MB input at once instead of working through it', async (t) => {
  const { result, heldMs } = await measureLoopHold(() => refusal({ model: 'svc-extractive-chat', input: 'x'.repeat(4_000_000) }));
  t.like(result, { status: 422, code: 'validation_failed' });
  t.log(`a 4 MB input to the built-in engine refused with the loop held at most ${heldMs.toFixed(1)} ms`);
  t.true(heldMs < 100, `held ${heldMs} ms, more than one request may hold others`);
});

test.serial('the conversation is held to chat messages: the cap passes, one more is 422', async (t) => {
  const cap = inferenceLimits.chatMaxMessages;
  const items = (count: number) => Array.from({ length: count }, (_, index) => userMessage(`message ${index}`));
  t.is((await openai.responses.create({ model: 'answer-a', input: items(cap) })).status, 'completed');
  // The instructions are chat's system message: they count as one.
  t.like(await refusal({ model: 'answer-a', instructions: 'Be brief.', input: items(cap) }), { status: 422, code: 'validation_failed' });
});

test.serial("the conversation's text is held to chat's body cap: exactly the cap passes, one character more is 413 as a chat body past it", async (t) => {
  const cap = inferenceLimits.chatBodyBytes;
  const perMessage = inferenceLimits.chatMaxMessageChars;
  const texts = (total: number) => {
    const full = Math.floor(total / perMessage);
    return [...Array.from({ length: full }, () => 'x'.repeat(perMessage)), 'x'.repeat(total - full * perMessage)].map((text) => userMessage(text));
  };
  t.is((await openai.responses.create({ model: 'answer-a', input: texts(cap) })).status, 'completed');
  const before = upstreamCalls();
  t.like(await refusal({ model: 'answer-a', input: texts(cap + 1) }), { status: 413, code: 'payload_too_large' });
  t.is(upstreamCalls(), before);
});

test.serial('a passed-through request may not name the upstream conversation, prompt or stored items: 400 naming the field, nothing sent', async (t) => {
  const before = upstreamCalls();
  const conversation = await refusal({ model: 'openai-resp', input: 'hi', conversation: 'conv_operator' });
  t.like(conversation, { status: 400, code: 'responses_parameter_unsupported' });
  t.regex(conversation.message, /^conversation:/);
  const prompt = await refusal({ model: 'openai-resp', input: 'hi', prompt: { id: 'pmpt_operator' } });
  t.like(prompt, { status: 400, code: 'responses_parameter_unsupported' });
  t.regex(prompt.message, /^prompt:/);
  const reference = await refusal({ model: 'openai-resp', input: [userMessage('hi'), { type: 'item_reference', id: 'msg_operator' }] });
  t.like(reference, { status: 400, code: 'responses_input_unsupported' });
  t.regex(reference.message, /^input\[1\]\.type:/);
  t.is(upstreamCalls(), before, 'the upstream saw none of them');
  t.is((await openai.responses.create({ model: 'openai-resp', input: 'hi' })).status, 'completed');
});

test.serial(
  'a previous_response_id chain is capped with the input it adds: exactly the cap passes, one byte more is refused; a read parses the answer only',
  async (t) => {
    const max = responsesLimits.maxConversationBytes;
    const stepBody = (input: unknown[], previous?: string) => ({ model: 'openai-resp', input, ...(previous ? { previous_response_id: previous } : {}) });
    const step = (input: unknown[], previous?: string) =>
      openai.responses.create(stepBody(input, previous) as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    const first = await step([userMessage('a'.repeat(3_000_000), 'msg_first')]);
    const second = await step([userMessage('b'.repeat(3_000_000), 'msg_second')], first.id);
    // The refusal of an input past the cap says how many bytes the stored conversation holds.
    const over = await refusal(stepBody([userMessage('c'.repeat(3_000_000), 'msg_over')], second.id));
    t.like(over, { status: 400, code: 'responses_input_unsupported' });
    const stored = Number(/holds (\d+) bytes/.exec(over.message)?.[1]);
    t.true(stored > 6_000_000, over.message);
    // An input whose stored JSON (as svc keeps it) fills the cap exactly.
    const inputOf = (chars: number) => [{ ...userMessage('', 'msg_edge'), content: [{ type: 'input_text', text: 'd'.repeat(chars) }] }];
    const overhead = JSON.stringify(inputOf(0)).length;
    const edge = max - stored - overhead;
    const past = await refusal(stepBody(inputOf(edge + 1), second.id));
    t.like(past, { status: 400, code: 'responses_input_unsupported' });
    const third = await step(inputOf(edge), second.id);
    t.is(third.status, 'completed');

    // The third row holds the whole chain (8 MiB); reading the response parses its answer alone.
    // Parsing the row took 20-21 ms of the loop here; the answer alone 4-7 ms (the least of three reads is judged).
    const holds: number[] = [];
    for (let read = 0; read < 3; read++) {
      const { result, heldMs } = await measureLoopHold(() => openai.responses.retrieve(third.id));
      t.is(result.id, third.id);
      holds.push(heldMs);
    }
    t.log(`GET of a response stored with an ${max}-byte conversation held the loop ${holds.map((ms) => ms.toFixed(1)).join(', ')} ms`);
    t.true(Math.min(...holds) < 12, `held ${holds.join(', ')} ms`);
  },
);
