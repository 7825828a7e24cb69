import { readFileSync } from 'node:fs';
import test from 'ava';
import type { ChatCompletionChunk, ChatStreamEvent, ResponseObject, ResponseStreamEvent, SseMessage } from '@svc/schemas';
import { translatedEvents } from '../src/features/responses/response-events.ts';
import { encodeSse } from '../src/http/sse.ts';
import { ChatStreamTranslator, type ResponseFrame } from '../src/features/responses/translation/index.ts';

/*
 * The translated stream of POST /v1/responses between the chat route's events and the SSE
 * writer: what it writes is exactly the events (the text svc writes for some of them by hand
 * included), the response is kept once, before its terminal event, and however the stream ends
 * the chat stream under it is closed (which reports its usage).
 */

/** A recorded chat stream: the chunks of its `data:` lines, `[DONE]` left out. */
function recorded(name: string): ChatCompletionChunk[] {
  const text = readFileSync(new URL(`./fixtures/responses/${name}`, import.meta.url), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as ChatCompletionChunk);
}

const frame = (): ResponseFrame => ({
  id: 'resp_test',
  createdAt: 1_764_195_600,
  model: 'team-chat',
  body: { instructions: 'Answer in one sentence.', metadata: { team: 'a' }, text: { format: { type: 'text' } } },
  previousResponseId: null,
  store: true,
  servedBy: { engine: 'openai', model: 'team-chat', method: 'neural' },
});

/** The chat route's events for these chunks, then `[DONE]`; `closed` says whether the stream was closed (its `finally` ran). */
function chatEvents(chunks: Array<ChatCompletionChunk | ChatStreamEvent>, options: { pauseAfter?: number } = {}) {
  const state = { closed: false, pulled: 0, resume: () => {} };
  async function* events(): AsyncGenerator<SseMessage<ChatStreamEvent>> {
    try {
      for (const chunk of chunks) {
        if (state.pulled++ === options.pauseAfter) await new Promise<void>((resolve) => (state.resume = resolve));
        yield { event: 'message', data: chunk as ChatStreamEvent };
      }
      yield { event: 'message', data: '[DONE]' };
    } finally {
      state.closed = true;
    }
  }
  return { events: events(), state };
}

/** What the SSE writer would write of the stream, and the events. */
async function run(stream: AsyncIterable<SseMessage<ResponseStreamEvent>>) {
  const written: string[] = [];
  const events: ResponseStreamEvent[] = [];
  for await (const message of stream) {
    written.push(encodeSse(message));
    events.push(message.data);
  }
  return { written, events };
}

/** A `persist` that records each response kept, its text, and how many events were handed over before it. */
const keeper = () => {
  const kept: Array<{ response: ResponseObject; json: string | undefined; after: number }> = [];
  let handedOver = 0;
  return {
    kept,
    count: () => handedOver++,
    persist: async (response: ResponseObject, json?: string) => {
      kept.push({ response, json, after: handedOver });
    },
  };
};

for (const fixture of ['chat-text.sse', 'chat-tool-calls.sse', 'chat-length.sse']) {
  test(`${fixture}: every event goes out as its own JSON, byte for byte, and the response is kept once, before its terminal event`, async (t) => {
    const { events: source, state } = chatEvents(recorded(fixture));
    const keep = keeper();
    const stream = translatedEvents(source, new ChatStreamTranslator(frame()), keep.persist);
    const written: string[] = [];
    const events: ResponseStreamEvent[] = [];
    for await (const message of stream) {
      written.push(encodeSse(message));
      events.push(message.data);
      keep.count();
    }
    t.deepEqual(
      written,
      events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`),
    );
    t.deepEqual(
      events.map((event) => event.sequence_number),
      events.map((_, index) => index),
    );
    t.is(keep.kept.length, 1);
    const [{ response, json, after }] = keep.kept as [(typeof keep.kept)[0]];
    // Kept once the last chunk came (after the last delta went out), before the closing events and the terminal one.
    const lastDelta = events.findLastIndex((event) => event.type.endsWith('.delta'));
    t.true(after > lastDelta && after < events.length, `kept after ${after} of ${events.length} events`);
    t.is(json, JSON.stringify(response));
    t.deepEqual((events.at(-1) as unknown as { response: ResponseObject }).response, response);
    t.true(state.closed);
  });
}

test('a chat stream that ends in an error chunk ends response.failed, kept once, and the chat stream is closed (its usage reported)', async (t) => {
  const text = recorded('chat-text.sse');
  const chunks: Array<ChatCompletionChunk | ChatStreamEvent> = text.slice(0, 3);
  chunks.push({
    ...text[0]!,
    choices: [{ index: 0, delta: {}, finish_reason: 'error' }],
    error: { code: 'upstream_error', message: 'broke off' },
  } as ChatStreamEvent);
  chunks.push(text[3]!);
  const { events: source, state } = chatEvents(chunks);
  const keep = keeper();
  const { events, written } = await run(translatedEvents(source, new ChatStreamTranslator(frame()), keep.persist));
  t.is(events.at(-1)!.type, 'response.failed');
  t.is(events.filter((event) => event.type === 'response.output_text.delta').length, 2, 'nothing after the error chunk is translated');
  t.deepEqual(
    written,
    events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`),
  );
  t.is(keep.kept.length, 1);
  t.is(keep.kept[0]!.response.status, 'failed');
  t.true(state.closed);
});

test('a tool call resumed after the next began ends response.failed with upstream_error, and the chat stream is closed', async (t) => {
  const chunks = recorded('chat-tool-calls.sse');
  const late = structuredClone(chunks[1]!);
  const { events: source, state } = chatEvents([...chunks.slice(0, 5), late, ...chunks.slice(5)]);
  const keep = keeper();
  const { events } = await run(translatedEvents(source, new ChatStreamTranslator(frame()), keep.persist));
  const failed = events.at(-1) as unknown as { type: string; response: ResponseObject };
  t.is(failed.type, 'response.failed');
  t.deepEqual(failed.response.error, {
    code: 'upstream_error',
    message: 'The model sent tool call arguments out of order (a call resumed after the next began).',
  });
  t.is(keep.kept.length, 1);
  t.true(state.closed);
});

test('a client that leaves mid-stream closes the chat stream, and nothing is kept', async (t) => {
  const { events: source, state } = chatEvents(recorded('chat-text.sse'), { pauseAfter: 2 });
  const keep = keeper();
  const stream = translatedEvents(source, new ChatStreamTranslator(frame()), keep.persist);
  const seen: string[] = [];
  let next = await stream.next();
  while (!next.done && next.value.data.type !== 'response.output_text.delta') {
    seen.push(next.value.data.type);
    next = await stream.next();
  }
  t.deepEqual(seen, ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
  // The writer waits for the next event while the chat stream waits for the model; the client leaves then.
  const pending = stream.next();
  const closing = stream.return!();
  state.resume();
  await closing;
  t.true((await pending).done || (await pending).value.data.type === 'response.output_text.delta');
  t.true(state.closed);
  t.true((await stream.next()).done);
  t.is(keep.kept.length, 0);
});
