import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeResponses, fakeToolChat } from './fake-openai-agent-turns.ts';
import { answerOutage, type FakeOutage } from './fake-upstream-outage.ts';

export type { FakeOutage } from './fake-upstream-outage.ts';

export { FAKE_RESPONSES_ANSWER, FAKE_TOOL_ARGUMENTS, toolAnswer } from './fake-openai-agent-turns.ts';

/**
 * A stand-in for an OpenAI-compatible server (OpenAI, vLLM, TEI) that this machine cannot
 * reach, speaking its exact wire format: `/v1/chat/completions` (JSON, or data-only SSE of
 * `chat.completion.chunk` ending `data: [DONE]`, with the usage chunk when asked; `n` choices
 * when asked, each by its index),
 * `/v1/embeddings`, Cohere-shaped `/v1/rerank`, TEI's native `/rerank`, and errors in OpenAI's
 * `{ error: { message, type, param, code } }` shape. The model name picks the behaviour:
 *
 * - `answer-*`: streams {@link FAKE_ANSWER} word by word (`chunkDelayMs` apart);
 * - `broken-*`: 500 before anything; `unauthorized-*`: 401 echoing the key; `refuse-*`: 400 with a message;
 * - `hang-*`: never answers (not even headers);
 * - `midstream-error-*`: two chunks, then an `{ error }` event;
 * - `pause-*`: one chunk, a pause of `pauseMs` (`pause-long-*`: 2.5 s), then the rest;
 * - `slow-*`: a chunk every 20 ms, 500 of them; after the fourth, a silence of 2 s (a client
 *   that leaves then must be noticed by svc itself, not at its next write);
 * - `burst-*`: 300 chunks written at once (`w0 w1 ...`), more than svc queues before pausing the body;
 * - `pretty-*`: the answer as pretty-printed JSON, each event's data spread over several `data:` lines;
 * - `truncated-*`: three chunks, then the body ends without `data: [DONE]`;
 * - `details-*`: usage with OpenAI's `prompt_tokens_details` and `completion_tokens_details`;
 * - `endless-error-*`: a 503 whose body never ends (a broken proxy's error page, 16 KiB every 5 ms);
 * - `tool-*`: calls the first function tool it is given, then answers with the tool's result;
 * - and `/v1/responses` for any model: the Responses API, with the same tool behaviour
 *   (`fake-openai-agent-turns.ts`).
 */
export const FAKE_ANSWER = 'Hello from the fake upstream, one word at a time.';

/** The text of choice `index` when a request asks for `n` choices: the first is FAKE_ANSWER, the others differ from it. */
export const fakeAnswer = (index: number) => (index === 0 ? FAKE_ANSWER : `Another answer from the fake upstream, choice ${index}.`);

/**
 * Usage with OpenAI's token details, as OpenAI sends it (`details-*` models; other models answer
 * without details, as vLLM does by default). The counts are not all zero, so a test sees them
 * pass through rather than be made up.
 */
export function fakeUsageWithDetails(prompt: number, completion: number) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: Math.ceil(prompt / 2), audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: Math.floor(completion / 3), audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

export interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
  /** performance.now() when the request closed before its answer ended (the caller aborted). */
  abortedAt?: number;
  /** The W3C trace context svc passed on (only while its tracing is on). */
  traceparent: string | undefined;
  /** performance.now() when the request arrived. */
  receivedAt: number;
  /** performance.now() when the answer ended normally. */
  finishedAt?: number;
}

export interface FakeUpstream {
  /** Base URL up to `/v1`, as `SVC_UPSTREAM_BASE_URL` takes it. */
  baseUrl: string;
  origin: string;
  requests: RecordedRequest[];
  /** Resolves when a request to the given model arrives. */
  nextRequest(model: string): Promise<RecordedRequest>;
  /** From now on every request (still recorded) gets this failure, until set to undefined. */
  setOutage(outage: FakeOutage | undefined): void;
  close(): Promise<void>;
}

export interface FakeUpstreamOptions {
  chunkDelayMs?: number;
  pauseMs?: number;
  /** The key the fake requires (401 otherwise); absent: any. */
  apiKey?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function openAiError(response: ServerResponse, status: number, message: string, type: string, code: string | null): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

/** Word tokens of the prompt, the fake's stand-in for a tokenizer. */
function promptTokens(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  return messages.reduce(
    (sum: number, message: { content?: unknown }) => sum + (typeof message.content === 'string' ? message.content.split(/\s+/).filter(Boolean).length : 0),
    0,
  );
}

/** A deterministic vector for a text, so a test can check the numbers passed through. */
export function fakeVector(text: string): number[] {
  return [text.length, 0.5, -0.25, text.split(' ').length / 10];
}

export async function startFakeOpenAiUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const waiters: Array<{ model: string; resolve: (request: RecordedRequest) => void }> = [];
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const pauseMs = options.pauseMs ?? 300;
  const hanging = new Set<ServerResponse>();
  let outage: FakeOutage | undefined;

  async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
    const parts: Buffer[] = [];
    for await (const part of request) parts.push(part as Buffer);
    return JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as Record<string, unknown>;
  }

  async function chat(record: RecordedRequest, response: ServerResponse, closed: () => boolean): Promise<void> {
    const body = record.body;
    const model = String(body.model);
    const id = `chatcmpl-fake-${requests.length}`;
    const created = 1_700_000_000;
    // `n` choices, as OpenAI answers them: each with its index, counted together in one usage.
    const answers = Array.from({ length: typeof body.n === 'number' && body.n > 1 ? body.n : 1 }, (_, index) => fakeAnswer(index).split(/(?<= )/));
    const words = answers[0]!;
    const prompt = promptTokens(body.messages);
    const completion = answers.reduce((sum, answer) => sum + answer.length, 0);
    const usage = model.startsWith('details-')
      ? fakeUsageWithDetails(prompt, completion)
      : { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    if (!body.stream) {
      response.writeHead(200, { 'content-type': 'application/json' });
      const choices = answers.map((answer, index) => ({
        index,
        message: { role: 'assistant', content: answer.join(''), refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      }));
      response.end(JSON.stringify({ id, object: 'chat.completion', created, model, system_fingerprint: 'fp_fake', choices, usage }));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const send = (data: unknown) =>
      response.write(
        model.startsWith('pretty-')
          ? `${JSON.stringify(data, null, 2)
              .split('\n')
              .map((line) => `data: ${line}`)
              .join('\n')}\n\n`
          : `data: ${JSON.stringify(data)}\n\n`,
      );
    const chunk = (delta: Record<string, unknown>, finish: string | null, choice = 0) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      system_fingerprint: 'fp_fake',
      choices: [{ index: choice, delta, logprobs: null, finish_reason: finish }],
    });
    const pieces = model.startsWith('slow-')
      ? Array.from({ length: 500 }, (_, index) => `w${index} `)
      : model.startsWith('burst-')
        ? Array.from({ length: 300 }, (_, index) => `w${index} `)
        : words;
    for (const choice of answers.keys()) send(chunk({ role: 'assistant', content: '' }, null, choice));
    for (const [index, piece] of pieces.entries()) {
      if (closed()) return;
      if (model.startsWith('truncated-') && index === 2) {
        response.end();
        return;
      }
      if (model.startsWith('midstream-error-') && index === 2) {
        send({ error: { message: 'The model crashed while generating.', type: 'server_error', param: null, code: 'internal_error' } });
        response.end();
        return;
      }
      if (model.startsWith('pause-') && index === 1) await sleep(model.startsWith('pause-long-') ? 2500 : pauseMs);
      if (model.startsWith('slow-') && index === 4) await sleep(2000);
      const delay = model.startsWith('slow-') ? 20 : chunkDelayMs;
      if (delay > 0) await sleep(delay);
      send(chunk({ content: piece }, null));
      // The other choices' words at the same step, interleaved as OpenAI streams them.
      for (let choice = 1; choice < answers.length; choice++)
        if (answers[choice]![index] !== undefined) send(chunk({ content: answers[choice]![index] }, null, choice));
    }
    for (let choice = 1; choice < answers.length; choice++)
      for (const piece of answers[choice]!.slice(pieces.length)) send(chunk({ content: piece }, null, choice));
    for (const choice of answers.keys()) send(chunk({}, 'stop', choice));
    const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
    if (streamOptions?.include_usage) send({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_fake', choices: [], usage });
    response.write('data: [DONE]\n\n');
    response.end();
  }

  const server = createServer(async (request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    const record: RecordedRequest = {
      path,
      authorization: request.headers.authorization,
      traceparent: request.headers.traceparent as string | undefined,
      receivedAt: performance.now(),
      body: {},
    };
    let ended = false;
    response.once('finish', () => {
      ended = true;
      record.finishedAt = performance.now();
    });
    response.once('close', () => {
      if (!ended) record.abortedAt = performance.now();
    });
    try {
      record.body = await readJson(request);
    } catch {
      openAiError(response, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error', null);
      return;
    }
    requests.push(record);
    const model = String(record.body.model ?? '');
    for (const waiter of waiters.filter((entry) => entry.model === model)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(record);
    }
    if (outage !== undefined) return answerOutage(response, outage);
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      openAiError(
        response,
        401,
        `Incorrect API key provided: ${String(request.headers.authorization).slice(7)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        'invalid_api_key',
      );
      return;
    }
    if (model.startsWith('broken-')) return openAiError(response, 500, 'The server had an error while processing your request.', 'server_error', null);
    // OpenAI echoes the refused key in its message: svc must not pass it on.
    if (model.startsWith('unauthorized-'))
      return openAiError(
        response,
        401,
        `Incorrect API key provided: ${String(request.headers.authorization).slice(7)}.`,
        'invalid_request_error',
        'invalid_api_key',
      );
    if (model.startsWith('refuse-')) return openAiError(response, 400, "Invalid value for 'temperature': too hot.", 'invalid_request_error', 'invalid_value');
    if (model.startsWith('endless-error-')) {
      response.writeHead(503, { 'content-type': 'text/html' });
      const page = `<p>${'x'.repeat(16_384)}</p>`;
      const writing = setInterval(() => response.write(page), 5);
      response.once('close', () => clearInterval(writing));
      return;
    }
    if (model.startsWith('hang-')) {
      hanging.add(response);
      return;
    }
    const closed = () => response.destroyed || record.abortedAt !== undefined;
    if (path === '/v1/chat/completions' && model.startsWith('tool-')) return fakeToolChat(record.body, response, FAKE_ANSWER);
    if (path === '/v1/chat/completions') return chat(record, response, closed);
    if (path === '/v1/responses') return fakeResponses(record.body, response);
    if (path === '/v1/embeddings') {
      const input = record.body.input;
      const inputs = typeof input === 'string' ? [input] : (input as string[]);
      const tokens = inputs.reduce((sum, text) => sum + text.split(/\s+/).filter(Boolean).length, 0);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          object: 'list',
          data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: fakeVector(text) })),
          model,
          usage: { prompt_tokens: tokens, total_tokens: tokens },
        }),
      );
      return;
    }
    const query = String(record.body.query ?? '');
    const overlap = (text: string) => text.split(/\s+/).filter((word) => query.split(/\s+/).includes(word)).length / Math.max(1, text.split(/\s+/).length);
    if (path === '/v1/rerank') {
      const documents = record.body.documents as string[];
      const results = documents.map((text, index) => ({ index, relevance_score: overlap(text) })).sort((a, b) => b.relevance_score - a.relevance_score);
      const topN = typeof record.body.top_n === 'number' ? record.body.top_n : results.length;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ id: 'rerank-fake', model, results: results.slice(0, topN), usage: { total_tokens: documents.length * 3 } }));
      return;
    }
    if (path === '/rerank') {
      // TEI's native route: `{ query, texts }` in, a bare array of `{ index, score }` out.
      const texts = record.body.texts as string[];
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(texts.map((text, index) => ({ index, score: overlap(text) })).sort((a, b) => b.score - a.score)));
      return;
    }
    openAiError(response, 404, `Unknown request URL: POST ${path}.`, 'invalid_request_error', 'unknown_url');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: `${origin}/v1`,
    origin,
    requests,
    nextRequest: (model) => new Promise((resolve) => waiters.push({ model, resolve })),
    setOutage(next) {
      outage = next;
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
