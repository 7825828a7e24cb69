import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/** svc's own client, whose Responses methods come from the contract, over the built-in chat model (the translation path, no upstream). */
let svc: TestServer;

test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

test('svc.responses.create streams the Responses events; the completed response is stored and its input listed', async (t) => {
  const stream = await svc.operator.responses.create({
    body: { model: 'svc-extractive-chat', instructions: 'Quote the docs.', input: 'How do I post on the blackboard?', stream: true },
  });
  if (!(Symbol.asyncIterator in stream)) return t.fail('expected a stream');
  const events: Array<{
    event: string;
    data: {
      type: string;
      sequence_number: number;
      delta?: string;
      response?: { id: string; status: string; output: Array<{ content?: Array<{ text?: string }> }> };
    };
  }> = [];
  for await (const message of stream as AsyncIterable<(typeof events)[number]>) events.push(message);
  t.deepEqual(
    events.map((message) => message.event),
    events.map((message) => message.data.type),
  );
  t.deepEqual(
    events.map((message) => message.data.sequence_number),
    events.map((_, index) => index),
  );
  t.is(events[0]!.event, 'response.created');
  const completed = events.at(-1)!.data;
  t.is(completed.type, 'response.completed');
  const text = events.flatMap((message) => (message.event === 'response.output_text.delta' ? [message.data.delta!] : [])).join('');
  t.true(text.length > 0);
  t.is(completed.response!.output[0]!.content![0]!.text, text);
  const stored = await svc.operator.responses.retrieve({ params: { response_id: completed.response!.id } });
  if (Symbol.asyncIterator in stored) return t.fail('expected the response, not a stream');
  t.is(stored.status, 'completed');
  t.is(stored.instructions, 'Quote the docs.');
  const items = [];
  for await (const item of svc.operator.responses.inputItems.all({ params: { response_id: stored.id } })) items.push(item);
  t.deepEqual(
    items.map((item) => item.type),
    ['message'],
  );
});
