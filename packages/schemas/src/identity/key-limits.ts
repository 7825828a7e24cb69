import { z } from 'zod';
import { cursorList } from '../cursor-list.ts';

/**
 * The largest value each limit takes; past these a limit means nothing a server could honour,
 * and a typo (an extra zero) is refused instead of silently lifting the limit.
 */
export const keyLimitMaximums = {
  requests_per_minute: 1_000_000,
  concurrent_requests: 10_000,
  tokens_per_minute: 1_000_000_000,
  credits_per_day: 100_000_000,
  credits_per_month: 1_000_000_000,
} as const;

export type KeyLimitName = keyof typeof keyLimitMaximums;
export const keyLimitNames = Object.keys(keyLimitMaximums) as KeyLimitName[];

/**
 * What an inference call reserves of its key's `tokens_per_minute` before it runs (OpenAI's way:
 * tokens are counted before the call, and settled to the reported usage after it): the output it
 * may produce (`max_tokens`, `max_completion_tokens` or `max_output_tokens`, else
 * `defaultOutputTokens` on the routes whose body takes such a bound: chat and Responses; times `n`
 * choices) plus its input, estimated as the request body's bytes divided by `bytesPerInputToken`
 * (a chunked body: the route's body cap).
 */
export const tokenReservation = {
  defaultOutputTokens: 1024,
  bytesPerInputToken: 4,
} as const;

/**
 * A rate must let at least one call through (0 would be a disabled key: revoke it instead); a
 * credit cap of 0 is meaningful (the key may call free routes but never spend a credit).
 */
const limitField = (name: KeyLimitName, min: 0 | 1, what: string) =>
  z
    .number()
    .int(`${name} must be a whole number`)
    .min(min, `${name} must be at least ${min}`)
    .max(keyLimitMaximums[name], `${name} is at most ${keyLimitMaximums[name]}`)
    .nullable()
    .optional()
    .describe(`${what}; 1..${keyLimitMaximums[name]}${min === 0 ? ' (0 allowed)' : ''}. null: no limit of its own (the configured default applies)`);

/** Limits a developer key carries; each absent or null field falls back to the configured default for keys. */
export const KeyLimits = z
  .strictObject({
    requests_per_minute: limitField('requests_per_minute', 1, 'Requests to scoped routes per UTC clock minute'),
    concurrent_requests: limitField(
      'concurrent_requests',
      1,
      'Requests to scoped routes in flight at once, exact on any number of replicas: never more in flight than this (a busy key takes its places from leases of several that each replica holds, and spare places go back within 100 ms of not being used, so a request refused while another replica holds spare ones waits up to 200 ms for them)',
    ),
    tokens_per_minute: limitField(
      'tokens_per_minute',
      1,
      `Upstream tokens per UTC clock minute. An inference call reserves an estimate before it runs (max_tokens, max_completion_tokens or max_output_tokens, else ${tokenReservation.defaultOutputTokens} on chat and Responses, times n; plus the body's bytes / ${tokenReservation.bytesPerInputToken}) and is refused (429) when that does not fit in what the minute has left, unless the minute has nothing counted yet; the reservation is settled to the call's reported usage when it ends. On any number of replicas (a busy key's reservations taken from chunks of the minute a replica reserved included) the minute's reservations stay within the limit plus one call's estimate`,
    ),
    credits_per_day: limitField('credits_per_day', 0, 'Credits the key may draw per UTC day (held and spent)'),
    credits_per_month: limitField('credits_per_month', 0, 'Credits the key may draw per UTC calendar month (held and spent)'),
  })
  .meta({ id: 'KeyLimits' });
export type KeyLimits = z.infer<typeof KeyLimits>;

/** Limits as the server applies them: a number, or absent for no limit. */
export type EffectiveLimits = { readonly [Name in KeyLimitName]?: number };

/** PATCH body: fields present replace the key's own value (null clears it), absent fields stay. */
export const DeveloperCredentialUpdateRequest = z
  .strictObject({ limits: KeyLimits.describe('The limits to change; absent fields are left as they are') })
  .meta({ id: 'DeveloperCredentialUpdateRequest' });
export type DeveloperCredentialUpdateRequest = z.input<typeof DeveloperCredentialUpdateRequest>;

/** One day and model of a key's use. */
export const KeyUsageRow = z
  .object({
    day: z.string().describe('UTC day, YYYY-MM-DD'),
    model: z.string(),
    requests: z.number().int().nonnegative().describe('Inference calls answered to the key with this model'),
    prompt_tokens: z.number().int().nonnegative(),
    completion_tokens: z.number().int().nonnegative(),
    total_tokens: z.number().int().nonnegative().describe('Upstream tokens, as each call reported them'),
    credits: z.number().int().nonnegative().describe('Credits committed (spent) by credit-funded calls'),
  })
  .meta({ id: 'KeyUsageRow' });
export type KeyUsageRow = z.infer<typeof KeyUsageRow>;

export const KeyUsagePage = cursorList(KeyUsageRow, { order: 'Newest day first; within a day by model' })
  .extend({ credential_id: z.string() })
  .meta({ id: 'KeyUsagePage' });
export type KeyUsagePage = z.infer<typeof KeyUsagePage>;
