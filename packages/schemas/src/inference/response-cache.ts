import { z } from 'zod';

/** The request header by which a caller lets a chat or Responses answer at temperature 0 be cached (Helicone's name, in svc's namespace). */
export const CACHE_OPT_IN_HEADER = 'x-svc-cache-enabled';
/** The answer header saying whether the response cache served it (`hit`) or stored it (`miss`). */
export const CACHE_STATUS_HEADER = 'x-svc-cache';
/** The name the response cache has in `GET /v1/cache`. */
export const RESPONSE_CACHE_NAME = 'response-cache';

/** The opt-in header of the chat and Responses routes: only `true` opts in. */
export const CacheOptInHeaders = z.looseObject({
  [CACHE_OPT_IN_HEADER]: z
    .enum(['true', 'false'])
    .optional()
    .describe('`true` lets a non-streamed answer with `temperature: 0` be served from, and stored in, the response cache; anything else leaves the cache out.'),
});

/**
 * What the cache does, said once for every route it serves. The reading chosen where the issue
 * reads two ways: entries are scoped to the caller's principal (never shared across principals,
 * even for public models), and a hit on a paid route is charged like any other successful call.
 */
export const responseCacheNote =
  'Response cache: an answer of an upstream model is stored in the database for its TTL, keyed by the principal, the operation, the model and the canonical request, and a repeat ' +
  `of that request by the same principal is answered from it, byte for byte, with \`${CACHE_STATUS_HEADER}: hit\` (a stored answer says \`${CACHE_STATUS_HEADER}: miss\`). ` +
  'Embeddings, rerank and classify are cached; chat and Responses only when not streamed, `temperature` is 0 and the caller sends ' +
  `\`${CACHE_OPT_IN_HEADER}: true\`. Answers of the built-in engine and of shared principals (the demo credential, open access) are never cached: ` +
  'the cache saves upstream calls, and a built-in answer has none to save. Only the built-in engine classifies today (no upstream protocol svc speaks has a classify call), ' +
  "so classify answers are not cached in practice. Only the named model's own answer is stored: a fallback's (another model, or the built-in engine after the upstream failed) is passed on unkept. " +
  'A Responses continuation of a gone `previous_response_id` is 404 as without the cache, and a hit whose stored response was deleted is answered again (a miss).';

export const CachePurgeQuery = z.object({
  model: z.string().min(1).max(256).optional().describe('Purge only the entries of this model id (as /v1/models names it); absent: every entry.'),
});

export const CachePurgeResponse = z
  .object({
    name: z.literal(RESPONSE_CACHE_NAME),
    purged_entries: z.number().int().nonnegative(),
    purged_bytes: z.number().int().nonnegative(),
  })
  .meta({ id: 'CachePurgeResponse' });
export type CachePurgeResponse = z.infer<typeof CachePurgeResponse>;
