import { tokenReservation } from '@svc/schemas';

const wholeCount = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined);

/**
 * The tokens an inference call reserves of its key's minute before it runs (`tokenReservation`
 * in @svc/schemas, docs/limits.md): its output bound (`max_tokens`, `max_completion_tokens` or
 * `max_output_tokens`, else the default), times `n` choices, plus its input as the body's bytes
 * over `bytesPerInputToken`. Reads a few top-level fields: constant cost whatever the body.
 */
export function estimateCallTokens(body: unknown, bodyBytes: number): number {
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const output =
    wholeCount(fields.max_tokens) ?? wholeCount(fields.max_completion_tokens) ?? wholeCount(fields.max_output_tokens) ?? tokenReservation.defaultOutputTokens;
  const choices = wholeCount(fields.n) ?? 1;
  return output * choices + Math.ceil(bodyBytes / tokenReservation.bytesPerInputToken);
}
