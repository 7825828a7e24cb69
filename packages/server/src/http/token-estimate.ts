import { tokenReservation } from '@svc/schemas';
import type { z } from 'zod';

/** The body fields that bound a call's output, in the order they are read. */
const OUTPUT_BOUNDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const;

const wholeCount = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined);

/**
 * Whether a route's body can bound the call's output (chat, Responses): such a call that names no
 * bound reserves the default output. Other inference operations (embeddings, rerank, classify,
 * summarize, RAG, PDF) reserve their input estimate, and what output they report is counted when
 * they report it. Worked out once per route, when the contract is mounted.
 */
export function boundsOutput(body: z.ZodType | undefined): boolean {
  let schema = body as { shape?: unknown; def?: { in?: unknown; innerType?: unknown } } | undefined;
  for (let depth = 0; depth < 4 && schema; depth++) {
    if (schema.shape && typeof schema.shape === 'object') return OUTPUT_BOUNDS.some((field) => field in (schema!.shape as object));
    schema = (schema.def?.in ?? schema.def?.innerType) as typeof schema;
  }
  return false;
}

/**
 * The tokens an inference call reserves of its key's minute before it runs (`tokenReservation`
 * in @svc/schemas, docs/limits.md): its output bound (`max_tokens`, `max_completion_tokens` or
 * `max_output_tokens`, else `defaultOutput`: the default on a route whose body bounds output,
 * else 0), times `n` choices, plus its input as the body's bytes over `bytesPerInputToken`.
 * Reads a few top-level fields: constant cost whatever the body.
 */
export function estimateCallTokens(body: unknown, bodyBytes: number, defaultOutput: number): number {
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const output = wholeCount(fields.max_tokens) ?? wholeCount(fields.max_completion_tokens) ?? wholeCount(fields.max_output_tokens) ?? defaultOutput;
  const choices = wholeCount(fields.n) ?? 1;
  return output * choices + Math.ceil(bodyBytes / tokenReservation.bytesPerInputToken);
}
