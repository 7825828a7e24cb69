import { defineContract, defineRoute, jsonOrSse } from '../route.ts';
import { ChatCompletion, ChatCompletionsRequest, ChatStreamEvent } from './chat.ts';
import { ClassifyRequest, ClassifyResponse } from './classify.ts';
import { EmbeddingsRequest, EmbeddingsResponse } from './embeddings.ts';
import { EvalRequest, EvalResponse } from './eval.ts';
import {
  DiscoverRequest,
  DiscoverResponse,
  FindSpecialistRequest,
  FindSpecialistResponse,
  RequestSpecialistRequest,
  RequestSpecialistResponse,
  RouteRequest,
  RouteResponse,
} from './guidance.ts';
import { inferenceLimits as limits } from './limits.ts';
import { RagRequest, RagResponse, RagStreamEvent } from './rag.ts';
import { RerankRequest, RerankResponse } from './rerank.ts';
import { CacheOptInHeaders, responseCacheNote } from './response-cache.ts';
import { SpeedTestResponse } from './speed-test.ts';
import { SummarizeRequest, SummarizeResponse, SummarizeStreamEvent } from './summarize.ts';

const invoke = { auth: { kind: 'scoped', scopes: ['inference:invoke'] }, surface: 'base', tags: ['inference'] } as const;
/** Errors every model-backed route may answer besides auth and input: an unknown model (422), an upstream that failed (502), none free to take the call (503) or timed out (504). */
const modelErrors = [413, 502, 503, 504] as const;
const modelNote =
  'An unknown `model` is a 422 `model_not_found` whose message lists the known ones; a model that cannot do this operation is a 422 `model_operation_unsupported`. ' +
  "An upstream that fails before its first byte is retried on the model's other deployments (never after its first byte, so a paid call is charged once), then on its fallbacks, then answers 502 `upstream_error` or 504 `upstream_timeout` (both `retryable`, with `Retry-After` while the model cools down). " +
  'When every deployment is at its in-flight maximum or cooling down: 503 `upstream_unavailable` (`retryable`). ' +
  "A request the upstream refuses itself (its 400, 413 or 422) is a 422 `upstream_rejected_request` with the upstream's message and no fallback, since another upstream would refuse it too.";

export const inferenceContract = defineContract({
  chat: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/chat/completions',
    summary: 'Chat completion in the OpenAI wire format (JSON, or an SSE stream with `stream: true`)',
    description:
      'The OpenAI Chat Completions API: the `openai` client works unchanged with `baseURL` = `<base>/v1`. ' +
      'With `stream: true` the answer is data-only server-sent events of `chat.completion.chunk` objects ending `data: [DONE]`; ' +
      'with `stream_options.include_usage` a last chunk with empty `choices` carries the usage. An error after the stream started ' +
      'is a final chunk with a top-level `error { code, message }` and `finish_reason: "error"`, then `[DONE]`. The status is sent once the ' +
      'engine produced its first event, so an upstream that fails or stays silent before that still falls back. svc always asks an upstream for ' +
      'its usage (to count the call) and passes the usage chunk on only when `include_usage` asked for it. Silences longer than 15 s (`SVC_SSE_KEEPALIVE_MS`) carry ' +
      'SSE comments (`: keep-alive`). A client that disconnects aborts the upstream request at once. The built-in model ' +
      "(`svc-extractive-chat`) answers extractively from the conversation and svc's own documentation, and says so. " +
      `Limits: body ${limits.chatBodyBytes} bytes (413), ${limits.chatMaxMessages} messages, ${limits.chatMaxMessageChars} characters a message, ` +
      `max_tokens 1..${limits.chatMaxTokens}, ${limits.chatMaxStopSequences} stop sequences. ${modelNote} ${responseCacheNote}`,
    headers: CacheOptInHeaders,
    body: ChatCompletionsRequest,
    bodyLimitBytes: limits.chatBodyBytes,
    errors: modelErrors,
    responses: { 200: jsonOrSse(ChatCompletion, ChatStreamEvent) },
  }),
  embeddings: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/embeddings',
    summary: 'Embeddings in the OpenAI wire format (float or base64)',
    description: `Input a string or up to ${limits.embeddingsMaxInputs} strings of at most ${limits.embeddingsMaxInputChars} characters; body ${limits.embeddingsBodyBytes} bytes (413). ${modelNote} ${responseCacheNote}`,
    body: EmbeddingsRequest,
    bodyLimitBytes: limits.embeddingsBodyBytes,
    errors: modelErrors,
    responses: { 200: EmbeddingsResponse },
  }),
  rerank: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/rerank',
    summary: 'Rerank documents against a query (the Cohere/Jina shape)',
    description: `Up to ${limits.rerankMaxDocuments} documents of at most ${limits.rerankMaxDocumentChars} characters; body ${limits.rerankBodyBytes} bytes (413). Results best first; \`index\` is the document's place in the request. ${modelNote} ${responseCacheNote}`,
    body: RerankRequest,
    bodyLimitBytes: limits.rerankBodyBytes,
    errors: modelErrors,
    responses: { 200: RerankResponse },
  }),
  classify: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/classify',
    summary: 'Classify texts for a task (sentiment, toxicity, prompt_injection, tickets, nli) or into explicit labels',
    description: `Up to ${limits.classifyMaxTexts} texts (or nli pairs) of at most ${limits.classifyMaxTextChars} characters, up to ${limits.classifyMaxLabels} labels; body ${limits.classifyBodyBytes} bytes (413). Each result has its label, a score, every label's score and a confidence band; \`method\` says what made the scores. ${modelNote} ${responseCacheNote}`,
    body: ClassifyRequest,
    bodyLimitBytes: limits.classifyBodyBytes,
    errors: modelErrors,
    responses: { 200: ClassifyResponse },
  }),
  summarize: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/summarize',
    summary: 'Summarise a text (JSON, or an SSE stream with `stream: true`)',
    description: `At most ${limits.summarizeMaxChars} characters, ${limits.summarizeMaxSentences} sentences; body ${limits.summarizeBodyBytes} bytes (413). Stream events: \`sentence-selected\` (a SummarySentence) per sentence, then \`summary-completed\` (the SummarizeResponse, with usage); a failure after the start is an \`error\` event ({ code, message }). ${modelNote}`,
    body: SummarizeRequest,
    bodyLimitBytes: limits.summarizeBodyBytes,
    errors: modelErrors,
    responses: { 200: jsonOrSse(SummarizeResponse, SummarizeStreamEvent) },
  }),
  rag: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/rag',
    summary: 'Answer a question from documents, citing the passages (JSON, or an SSE stream with `stream: true`)',
    description: `Up to ${limits.ragMaxDocuments} documents of at most ${limits.ragMaxDocumentChars} characters (${limits.ragMaxTotalChars} in all), top_k 1..${limits.ragMaxTopK}; body ${limits.ragBodyBytes} bytes (413). Citations give the document index and UTF-16 offsets. Stream events: \`passage-retrieved\` per passage, \`answer-delta\` ({ text }) pieces, then \`answer-completed\` (the RagResponse, with usage); a failure after the start is an \`error\` event. ${modelNote}`,
    body: RagRequest,
    bodyLimitBytes: limits.ragBodyBytes,
    errors: modelErrors,
    responses: { 200: jsonOrSse(RagResponse, RagStreamEvent) },
  }),
  route: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/route',
    summary: 'Which operation and model to use for a task or a request, and why',
    description: `A description of at most ${limits.describeMaxChars} characters, or a request body; body ${limits.describeBodyBytes} bytes (413).`,
    body: RouteRequest,
    bodyLimitBytes: limits.describeBodyBytes,
    errors: [413],
    responses: { 200: RouteResponse },
  }),
  discover: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/discover',
    summary: 'What this service can do for a described need: operations, models and catalog artifacts, ranked',
    description: `A need of at most ${limits.describeMaxChars} characters; limit 1..${limits.describeMaxResults} (default 5); body ${limits.describeBodyBytes} bytes (413).`,
    body: DiscoverRequest,
    bodyLimitBytes: limits.describeBodyBytes,
    errors: [413],
    responses: { 200: DiscoverResponse },
  }),
  eval: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/eval',
    summary: 'Score predictions against references (exact match, token F1, ROUGE-L, BLEU, accuracy), optionally running a model first',
    description:
      `Up to ${limits.evalMaxItems} items of at most ${limits.evalMaxItemChars} characters; body ${limits.evalBodyBytes} bytes (413). Metrics are SQuAD-normalised exact match and token F1, ROUGE-L F-measure, corpus BLEU-4 (smoothed) and accuracy. ` +
      `ROUGE-L's longest common subsequence costs the longer side's tokens times the shorter's / 32 per item (tokens are runs of letters and digits); a request whose sum passes ${limits.evalMaxRougeLWordSteps} is a 422 \`eval_work_too_large\` (four pairs of the longest items fit, or 1000 pairs of about 1,000 tokens): split it. ${modelNote}`,
    body: EvalRequest,
    bodyLimitBytes: limits.evalBodyBytes,
    errors: modelErrors,
    responses: { 200: EvalResponse },
  }),
  findSpecialist: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/find_specialist',
    summary: 'The best catalog artifacts and served models for a task, ranked with reasons',
    description: `A task of at most ${limits.describeMaxChars} characters; limit 1..${limits.describeMaxResults} (default 5); body ${limits.describeBodyBytes} bytes (413).`,
    body: FindSpecialistRequest,
    bodyLimitBytes: limits.describeBodyBytes,
    errors: [413],
    responses: { 200: FindSpecialistResponse },
  }),
  requestSpecialist: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/request_specialist',
    summary: 'Find the best current matches for a need; when none is good enough, file a feature request for it',
    description:
      'Ranks catalog artifacts and served models as find_specialist does. When the best scores below `min_score` (default 0.35), a feature request ' +
      "(capability, task, use_case, target_tool) is filed on the caller's behalf through the catalog-request store, with its screening, replay and limit rules: " +
      'the same need asked again answers the same request (`replayed: true`) and files nothing new. Its status is then readable at GET /v1/request-status/{request_id}. ' +
      "The shared demo principal's filings are shared by every demo caller.",
    body: RequestSpecialistRequest,
    bodyLimitBytes: limits.describeBodyBytes,
    errors: [413, 429],
    responses: { 200: RequestSpecialistResponse },
  }),
  speedTest: defineRoute({
    ...invoke,
    method: 'POST',
    path: '/v1/speed-test',
    summary: 'Time a fixed built-in workload on each available engine (no body; rate limited per caller)',
    description: 'No caller-controlled compute: the workload is fixed. At most 6 calls a minute per caller (429 `rate_limited` with Retry-After past it).',
    errors: [429],
    responses: { 200: SpeedTestResponse },
  }),
});
