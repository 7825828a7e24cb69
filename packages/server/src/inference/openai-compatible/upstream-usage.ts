import type { InferenceUsage } from '@svc/schemas';

const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined);

/**
 * An upstream's usage as svc reports it: OpenAI's `prompt_tokens`/`completion_tokens`/
 * `total_tokens`, or Jina/vLLM rerank's `total_tokens` alone. Extra fields (token details) are
 * dropped; nothing usable gives undefined, and the caller decides what to count instead.
 */
export function usageFrom(value: unknown): InferenceUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = value as Record<string, unknown>;
  const prompt = count(raw.prompt_tokens);
  const completion = count(raw.completion_tokens);
  const total = count(raw.total_tokens) ?? (prompt ?? 0) + (completion ?? 0);
  if (prompt === undefined && completion === undefined && count(raw.total_tokens) === undefined) return undefined;
  return { prompt_tokens: prompt ?? total - (completion ?? 0), ...(completion !== undefined ? { completion_tokens: completion } : {}), total_tokens: total };
}
