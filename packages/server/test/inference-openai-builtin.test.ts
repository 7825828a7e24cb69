import test from 'ava';
import OpenAI from 'openai';
import { startInferenceServer, type InferenceServer } from './helpers/inference.ts';

/** The official openai client, unchanged, against svc's built-in engine: no upstream configured. */
let harness: InferenceServer;
let openai: OpenAI;
test.before(async () => {
  harness = await startInferenceServer();
  openai = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.key, maxRetries: 0 });
});
test.after.always(async () => {
  await harness?.svc.close();
});

test('chat.completions.create answers from the built-in extractive model, which says what it is', async (t) => {
  const completion = await openai.chat.completions.create({
    model: 'svc-extractive-chat',
    messages: [{ role: 'user', content: 'How do I download a verified artifact?' }],
  });
  t.is(completion.object, 'chat.completion');
  t.is(completion.model, 'svc-extractive-chat');
  t.truthy(completion.choices[0]?.message.content);
  t.regex((completion as unknown as { svc: { note: string } }).svc.note, /extractive/);
  t.true(completion.usage!.total_tokens > 0);
});

test('a streamed completion is for-await-able; include_usage ends with the usage chunk', async (t) => {
  const stream = await openai.chat.completions.create({
    model: 'svc-extractive-chat',
    messages: [{ role: 'user', content: 'What is the blackboard?' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined | null;
  let finish: string | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
    if (chunk.usage) usage = chunk.usage;
  }
  t.true(text.length > 0);
  t.is(finish, 'stop');
  t.true(usage!.total_tokens > 0);
});

test('embeddings: the client default (base64) and float decode to the same vector', async (t) => {
  const base64 = await openai.embeddings.create({ input: ['verified downloads'], model: 'svc-hashed-ngrams-512' });
  const float = await openai.embeddings.create({ input: 'verified downloads', model: 'svc-hashed-ngrams-512', encoding_format: 'float' });
  t.is(base64.data[0]!.embedding.length, 512);
  t.deepEqual(base64.data[0]!.embedding, float.data[0]!.embedding);
  t.true(base64.usage.prompt_tokens > 0);
});

test("an unknown model is an openai APIError with status 422 and svc's code", async (t) => {
  const error = await t.throwsAsync(openai.chat.completions.create({ model: 'gpt-nothing', messages: [{ role: 'user', content: 'hi' }] }));
  t.true(error instanceof OpenAI.APIError);
  t.is((error as InstanceType<typeof OpenAI.APIError>).status, 422);
  t.regex(error!.message, /svc-extractive-chat/);
});
