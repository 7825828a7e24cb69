import { z } from 'zod';
import { inferenceLimits as limits } from './limits.ts';
import { ServedBy } from './usage.ts';
import { CatalogRequestReceiptResponse } from '../requests/records.ts';
import { requestText, requestTextLimits } from '../requests/records.ts';

/** A high surrogate not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const description = z
  .string()
  .min(1)
  .max(limits.describeMaxChars, `a description holds at most ${limits.describeMaxChars} characters`)
  .regex(/^[^\u0000]*$/, 'the NUL character is not allowed')
  .refine((text) => !LONE_SURROGATE.test(text), 'a lone UTF-16 surrogate is not text');
const resultLimit = z.number().int().min(1).max(limits.describeMaxResults).default(5);

/** The operations svc serves, by the name /v1/route and /v1/discover answer with. */
export const InferenceOperation = z
  .enum(['chat', 'embeddings', 'rerank', 'classify', 'summarize', 'rag', 'pdf_extract', 'document_extract', 'eval', 'find_specialist'])
  .meta({ id: 'InferenceOperation' });
export type InferenceOperation = z.infer<typeof InferenceOperation>;

export const RouteRequest = z
  .strictObject({
    task: description.optional().describe('The task in words ("find near-duplicate support tickets").'),
    request: z.record(z.string(), z.unknown()).optional().describe('Or a request body you mean to send: its fields tell the operation.'),
  })
  .refine((body) => body.task !== undefined || body.request !== undefined, { message: 'send `task` or `request`', path: ['task'] })
  .meta({ id: 'RouteRequest' });
export type RouteRequest = z.input<typeof RouteRequest>;

export const RouteChoice = z
  .object({ operation: InferenceOperation, path: z.string(), model: z.string().nullable(), score: z.number(), reason: z.string() })
  .meta({ id: 'RouteChoice' });

export const RouteResponse = z.object({ choice: RouteChoice, alternatives: z.array(RouteChoice), svc: ServedBy.optional() }).meta({ id: 'RouteResponse' });
export type RouteResponse = z.infer<typeof RouteResponse>;

export const DiscoverRequest = z.strictObject({ need: description, limit: resultLimit }).meta({ id: 'DiscoverRequest' });
export type DiscoverRequest = z.input<typeof DiscoverRequest>;

export const DiscoverResult = z
  .object({
    kind: z.enum(['operation', 'model', 'artifact']),
    id: z.string(),
    title: z.string(),
    score: z.number(),
    reason: z.string(),
    path: z.string().optional().describe('For operations: the route to call. For artifacts: the catalog page.'),
  })
  .meta({ id: 'DiscoverResult' });

export const DiscoverResponse = z.object({ results: z.array(DiscoverResult) }).meta({ id: 'DiscoverResponse' });
export type DiscoverResponse = z.infer<typeof DiscoverResponse>;

export const FindSpecialistRequest = z
  .strictObject({ task: description, limit: resultLimit, min_score: z.number().min(0).max(1).default(0).describe('Leave out matches scoring below this.') })
  .meta({ id: 'FindSpecialistRequest' });
export type FindSpecialistRequest = z.input<typeof FindSpecialistRequest>;

export const SpecialistMatch = z
  .object({
    kind: z.enum(['artifact', 'model']),
    id: z.string(),
    title: z.string(),
    score: z.number().min(0).max(1),
    reasons: z.array(z.string()),
    task: z.string().nullable(),
  })
  .meta({ id: 'SpecialistMatch' });
export type SpecialistMatch = z.infer<typeof SpecialistMatch>;

export const FindSpecialistResponse = z.object({ matches: z.array(SpecialistMatch) }).meta({ id: 'FindSpecialistResponse' });
export type FindSpecialistResponse = z.infer<typeof FindSpecialistResponse>;

/**
 * What a caller needs, in the words of a feature request: matched against the catalog and the
 * served models first; filed as a feature request for the caller only when nothing is good enough.
 */
export const RequestSpecialistRequest = z
  .strictObject({
    capability: requestText(requestTextLimits.capability).describe('What you need, e.g. "a reranker for German legal text".'),
    task: requestText(requestTextLimits.task).describe('The task it serves, e.g. rerank, embeddings, toxicity.'),
    use_case: requestText(requestTextLimits.useCase).describe('What you would do with it (goes into the request when one is filed).'),
    target_tool: requestText(requestTextLimits.targetTool).optional(),
    limit: resultLimit,
    min_score: z.number().min(0).max(1).default(0.35).describe('A match scoring at least this is good enough, and nothing is filed.'),
  })
  .meta({ id: 'RequestSpecialistRequest' });
export type RequestSpecialistRequest = z.input<typeof RequestSpecialistRequest>;

export const RequestSpecialistResponse = z
  .object({
    matches: z.array(SpecialistMatch).describe('The best current matches, as find_specialist ranks them.'),
    good_enough: z.boolean().describe('True when a match reached min_score: nothing was filed.'),
    min_score: z.number(),
    filed: z
      .object({
        request: CatalogRequestReceiptResponse,
        replayed: z.boolean().describe('True when you had filed exactly this request before: the same request is answered, nothing new is created.'),
      })
      .nullable()
      .describe('The feature request filed on your behalf when no match was good enough.'),
  })
  .meta({ id: 'RequestSpecialistResponse' });
export type RequestSpecialistResponse = z.infer<typeof RequestSpecialistResponse>;
