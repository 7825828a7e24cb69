/**
 * The official `openai` npm client, unchanged, talking to svc: svc serves the OpenAI wire format
 * under `/v1`, so the only settings are `baseURL` and `apiKey` (a developer key with scope
 * `inference:invoke`, or the operator token). It makes a plain chat completion and a streamed one
 * on the built-in `svc-extractive-chat` model, then embeds two texts with `svc-hashed-ngrams-512`.
 * Both built-in models run inside svc: no upstream provider is needed.
 *
 * Run: `SVC_BASE_URL=http://127.0.0.1:8787 SVC_TOKEN=<key> node src/main.ts`.
 */
import OpenAI from 'openai';

const baseUrl = process.env.SVC_BASE_URL ?? 'http://127.0.0.1:8787';
const apiKey = process.env.SVC_TOKEN;
if (!apiKey) {
  process.stderr.write('set SVC_TOKEN to a developer key with scope inference:invoke (or the operator token)\n');
  process.exit(2);
}
const openai = new OpenAI({ baseURL: `${baseUrl.replace(/\/$/, '')}/v1`, apiKey });
const question = 'How do I download a verified artifact?';

// 1. A plain chat completion: one answer, with its token usage.
const completion = await openai.chat.completions.create({ model: 'svc-extractive-chat', messages: [{ role: 'user', content: question }] });
const answer = completion.choices[0]?.message.content ?? '';
process.stdout.write(`chat (${completion.model}, ${completion.usage?.total_tokens ?? 0} tokens): ${answer.split('\n', 1)[0]}\n`);

// 2. The same question streamed: the text arrives in chunks; include_usage adds a last usage chunk.
const stream = await openai.chat.completions.create({
  model: 'svc-extractive-chat',
  messages: [{ role: 'user', content: question }],
  stream: true,
  stream_options: { include_usage: true },
});
let streamed = '';
let chunks = 0;
let finish: string | null = null;
let streamedTokens = 0;
for await (const chunk of stream) {
  chunks += 1;
  streamed += chunk.choices[0]?.delta.content ?? '';
  finish = chunk.choices[0]?.finish_reason ?? finish;
  if (chunk.usage) streamedTokens = chunk.usage.total_tokens;
}
process.stdout.write(`stream: ${chunks} chunks, finish ${finish}, ${streamedTokens} tokens, same text as the plain answer: ${streamed === answer}\n`);

// 3. Embeddings: one vector per input, in input order.
const embeddings = await openai.embeddings.create({
  model: 'svc-hashed-ngrams-512',
  input: ['verified downloads', 'the public blackboard'],
  encoding_format: 'float',
});
const dimensions = embeddings.data.map((item) => item.embedding.length).join(', ');
process.stdout.write(`embeddings: ${embeddings.data.length} vectors of ${dimensions} dimensions, ${embeddings.usage.prompt_tokens} prompt tokens\n`);
