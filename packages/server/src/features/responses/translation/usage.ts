import type { InferenceUsage, ResponseUsage } from '@svc/schemas';

type Details = { prompt_tokens_details?: { cached_tokens?: unknown } | null; completion_tokens_details?: { reasoning_tokens?: unknown } | null };
const count = (value: unknown): number => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : 0);

/** Chat usage in the Responses API's names; the token details come along when the engine reported them. */
export function responseUsageFromChat(usage: InferenceUsage & Details): ResponseUsage {
  const input = usage.prompt_tokens;
  const output = usage.completion_tokens ?? Math.max(0, usage.total_tokens - input);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: count(usage.prompt_tokens_details?.cached_tokens) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: count(usage.completion_tokens_details?.reasoning_tokens) },
    total_tokens: usage.total_tokens,
  };
}

/** A Responses usage as svc's usage hook counts it (prompt and completion tokens). */
export function chatUsageFromResponse(usage: unknown): InferenceUsage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const raw = usage as Record<string, unknown>;
  const input = count(raw.input_tokens);
  const output = count(raw.output_tokens);
  return { prompt_tokens: input, completion_tokens: output, total_tokens: count(raw.total_tokens) || input + output };
}
