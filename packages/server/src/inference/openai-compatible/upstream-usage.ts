import type { InferenceUsage } from '@svc/schemas';

const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined);

/**
 * An upstream's token breakdown (`prompt_tokens_details`, `completion_tokens_details`) with its
 * counts kept as sent: OpenAI's named fields and any an upstream adds. Anything that is not a
 * count is dropped, so a caller reads only numbers there; nothing left gives undefined.
 */
function detailsFrom(value: unknown): Record<string, number> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  let details: Record<string, number> | undefined;
  for (const [name, raw] of Object.entries(value)) {
    const tokens = count(raw);
    if (tokens !== undefined) (details ??= {})[name] = tokens;
  }
  return details;
}

/**
 * An upstream's usage as svc reports it: OpenAI's `prompt_tokens`/`completion_tokens`/
 * `total_tokens` with their details, or Jina/vLLM rerank's `total_tokens` alone. Nothing usable
 * gives undefined, and the caller decides what to count instead.
 */
export function usageFrom(value: unknown): InferenceUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = value as Record<string, unknown>;
  const prompt = count(raw.prompt_tokens);
  const completion = count(raw.completion_tokens);
  const total = count(raw.total_tokens) ?? (prompt ?? 0) + (completion ?? 0);
  if (prompt === undefined && completion === undefined && count(raw.total_tokens) === undefined) return undefined;
  const promptDetails = detailsFrom(raw.prompt_tokens_details);
  const completionDetails = detailsFrom(raw.completion_tokens_details);
  return {
    prompt_tokens: prompt ?? total - (completion ?? 0),
    ...(completion !== undefined ? { completion_tokens: completion } : {}),
    total_tokens: total,
    ...(promptDetails ? { prompt_tokens_details: promptDetails } : {}),
    ...(completionDetails ? { completion_tokens_details: completionDetails } : {}),
  };
}
