/** Caps of the Responses API (ours: OpenAI documents none for a self-hosted gateway). */
export const responsesLimits = {
  /** The create body; agents resend whole conversations as input items, so it is chat's 1 MiB times four. */
  bodyBytes: 4 * 1024 * 1024,
  /** Input items of one request. */
  maxInputItems: 2048,
  /** Function tools of one request. */
  maxTools: 128,
  /** Characters of `instructions`. */
  maxInstructionsChars: 200_000,
  /** `max_output_tokens`. */
  maxOutputTokens: 32_768,
  /** Items a conversation may reach through `previous_response_id` (stored input and output included). */
  maxConversationItems: 4096,
  /**
   * Bytes of stored conversation `previous_response_id` may bring back (its context, input and
   * output as stored) together with the new input's JSON: the new row holds both, so a chain of
   * requests never grows one row past this and its answer, and the row is parsed on the server's thread.
   */
  maxConversationBytes: 8 * 1024 * 1024,
  /** Page size of `input_items`. */
  inputItemsPageMax: 100,
  inputItemsPageDefault: 20,
} as const;
