/** The longest wait an upstream's `Retry-After` is taken at; past it, the header is read as this (an upstream cannot park a deployment for days). */
export const RETRY_AFTER_MAX_MS = 3_600_000;

/**
 * Milliseconds to wait from an upstream's header, as `UpstreamExchange` keeps it: `ms:<n>` (OpenAI's
 * `retry-after-ms`), whole or decimal seconds, or an HTTP date. Anything else, or nothing: undefined.
 */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  let milliseconds: number;
  if (trimmed.startsWith('ms:')) milliseconds = Number(trimmed.slice(3));
  else if (/^\d+(\.\d+)?$/.test(trimmed)) milliseconds = Number(trimmed) * 1000;
  else milliseconds = Date.parse(trimmed) - now;
  if (!Number.isFinite(milliseconds)) return undefined;
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(0, Math.round(milliseconds)));
}
