import { z } from 'zod';
import { ServedBy } from '../inference/usage.ts';
import { responsesLimits as limits } from './limits.ts';
import { queryBoolean, queryInt } from '../query.ts';

/** What a response used, in the Responses API's names. */
export const ResponseUsage = z
  .looseObject({
    input_tokens: z.number().int().nonnegative(),
    input_tokens_details: z.looseObject({ cached_tokens: z.number().int().nonnegative() }),
    output_tokens: z.number().int().nonnegative(),
    output_tokens_details: z.looseObject({ reasoning_tokens: z.number().int().nonnegative() }),
    total_tokens: z.number().int().nonnegative(),
  })
  .meta({ id: 'ResponseUsage' });
export type ResponseUsage = z.infer<typeof ResponseUsage>;

/** An output item: a `message` (output_text and refusal parts) or a `function_call`; an upstream that speaks Responses may send other kinds. */
export const ResponseOutputItem = z.looseObject({ type: z.string(), id: z.string().optional() }).meta({ id: 'ResponseOutputItem' });
export type ResponseOutputItem = z.infer<typeof ResponseOutputItem>;

export const responseStatuses = ['completed', 'failed', 'in_progress', 'cancelled', 'queued', 'incomplete'] as const;

/** OpenAI's Response object, with svc's `svc` member saying who served it. */
export const ResponseObject = z
  .looseObject({
    id: z.string(),
    object: z.literal('response'),
    created_at: z.number(),
    status: z.enum(responseStatuses),
    model: z.string(),
    output: z.array(ResponseOutputItem),
    error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
    incomplete_details: z.looseObject({ reason: z.string().optional() }).nullable(),
    usage: ResponseUsage.nullable().optional(),
    previous_response_id: z.string().nullable().optional(),
    store: z.boolean().optional(),
    svc: ServedBy.optional(),
  })
  .meta({ id: 'ResponseObject' });
export type ResponseObject = z.infer<typeof ResponseObject>;

/** One event of a streamed response: `type` names it (`response.output_text.delta`), `sequence_number` orders it from 0. */
export const ResponseStreamEvent = z
  .looseObject({
    type: z.string(),
    sequence_number: z.number().int().nonnegative(),
  })
  .meta({ id: 'ResponseStreamEvent' });
export type ResponseStreamEvent = z.infer<typeof ResponseStreamEvent>;

export const ResponseIdParams = z.object({ response_id: z.string().min(1).max(256) });

/**
 * `GET /v1/responses/{id}`: with `stream=true`, the events of a background response as a stream,
 * resumed after `starting_after` (a `sequence_number` already seen) on any replica.
 */
export const ResponseRetrieveQuery = z.object({
  stream: queryBoolean().optional().describe('Stream the events of a background response (SSE) instead of answering the response.'),
  starting_after: queryInt(-1, 1_000_000_000)
    .optional()
    .describe('With `stream=true`: only the events whose `sequence_number` is greater (a stream cut after event N resumes with `starting_after=N`).'),
  include: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('Accepted for compatibility; svc keeps no extra item data.'),
});

export const ResponseDeleted = z.object({ id: z.string(), object: z.literal('response.deleted'), deleted: z.literal(true) }).meta({ id: 'ResponseDeleted' });
export type ResponseDeleted = z.infer<typeof ResponseDeleted>;

/** `GET /v1/responses/{id}/input_items`: OpenAI's cursor page (`after` is the last item id of the page before). */
export const ResponseInputItemsQuery = z.object({
  after: z.string().min(1).max(256).optional().describe('An item id from `last_id`: the page after it.'),
  before: z.string().min(1).max(256).optional().describe('An item id: the page before it.'),
  limit: queryInt(1, limits.inputItemsPageMax).default(limits.inputItemsPageDefault),
  order: z.enum(['asc', 'desc']).default('desc').describe("`desc` (OpenAI's default): newest item first."),
  include: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('Accepted for compatibility; svc keeps no extra item data.'),
});

export const ResponseInputItemList = z
  .object({
    object: z.literal('list'),
    data: z.array(z.looseObject({ type: z.string(), id: z.string() })),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
    has_more: z.boolean(),
  })
  .meta({ id: 'ResponseInputItemList' });
export type ResponseInputItemList = z.infer<typeof ResponseInputItemList>;
