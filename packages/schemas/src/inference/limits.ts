/**
 * Size limits of the inference bodies. The spec leaves them open (inference-billing-api section 8,
 * "Size limits of inference request bodies: not shown"); these are ours, listed in the contract's
 * descriptions and in docs/inference.md. A body past its byte cap is a 413; a field past its
 * count or length cap is a 422 whose message names the limit.
 */
export const inferenceLimits = {
  /** Chat: the whole JSON body, the messages, one message's text. */
  chatBodyBytes: 1_048_576,
  chatMaxMessages: 256,
  chatMaxMessageChars: 200_000,
  chatMaxStopSequences: 4,
  chatMaxTokens: 32_768,
  /** Choices per chat request (`n`): OpenAI's own cap; an upstream may set a lower one. */
  chatMaxChoices: 128,
  /** Embeddings: inputs per request (OpenAI's cap) and characters per input. */
  embeddingsBodyBytes: 4_194_304,
  embeddingsMaxInputs: 2048,
  embeddingsMaxInputChars: 32_768,
  /** Rerank: documents per request and characters per document or query. */
  rerankBodyBytes: 4_194_304,
  rerankMaxDocuments: 1000,
  rerankMaxDocumentChars: 32_768,
  /** Classify: texts per request and characters per text; explicit labels per request. */
  classifyBodyBytes: 2_097_152,
  classifyMaxTexts: 256,
  classifyMaxTextChars: 32_768,
  classifyMaxLabels: 64,
  /** Summarize: the text to summarise. */
  summarizeBodyBytes: 1_048_576,
  summarizeMaxChars: 400_000,
  summarizeMaxSentences: 50,
  /** RAG: documents given inline, characters per document and in all, passages retrieved. */
  ragBodyBytes: 2_097_152,
  ragMaxDocuments: 100,
  ragMaxDocumentChars: 200_000,
  ragMaxTotalChars: 1_000_000,
  ragMaxTopK: 20,
  ragMaxQuestionChars: 4_000,
  /** Route, discover, find_specialist: the description of the need. */
  describeBodyBytes: 65_536,
  describeMaxChars: 8_000,
  describeMaxResults: 50,
  /** Eval: items scored per request, characters per prediction or reference. */
  evalBodyBytes: 4_194_304,
  evalMaxItems: 1000,
  evalMaxItemChars: 32_768,
  /**
   * ROUGE-L work per request, in the word steps of its bit-parallel LCS: the sum over items of
   * the longer side's tokens times the shorter side's tokens / 32 (rounded up). 2^25 is four
   * pairs of the longest items (16,384 tokens each), about 100 ms, or 1000 pairs of ~1,000 tokens.
   */
  evalMaxRougeLWordSteps: 33_554_432,
} as const;
