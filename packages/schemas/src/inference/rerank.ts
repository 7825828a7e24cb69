import { z } from 'zod';
import { inferenceLimits as limits } from './limits.ts';
import { InferenceUsage, optionalModel, ServedBy } from './usage.ts';

const documentText = z.string().max(limits.rerankMaxDocumentChars, `a document holds at most ${limits.rerankMaxDocumentChars} characters`);

/** The Cohere/Jina rerank request; a document is a string or `{ text }`. */
export const RerankRequest = z
  .strictObject({
    query: z.string().min(1).max(limits.rerankMaxDocumentChars),
    documents: z
      .array(z.union([documentText, z.strictObject({ text: documentText })]))
      .min(1, 'send at least one document')
      .max(limits.rerankMaxDocuments, `at most ${limits.rerankMaxDocuments} documents`),
    top_n: z.number().int().min(1).max(limits.rerankMaxDocuments).optional().describe('How many results to answer (default: all, best first).'),
    return_documents: z.boolean().default(false),
    model: optionalModel,
  })
  .meta({ id: 'RerankRequest' });
export type RerankRequest = z.input<typeof RerankRequest>;

export const RerankResponse = z
  .object({
    results: z.array(
      z.object({
        index: z.number().int().nonnegative(),
        relevance_score: z
          .number()
          .describe(
            "Higher is more relevant. The built-in svc-bm25 answers 0..1: the BM25 score as a share of the query's ceiling (0 when no query term occurs); an upstream answers its own scale.",
          ),
        document: z.object({ text: z.string() }).optional(),
      }),
    ),
    model: z.string(),
    usage: InferenceUsage,
    svc: ServedBy.optional(),
  })
  .meta({ id: 'RerankResponse' });
export type RerankResponse = z.infer<typeof RerankResponse>;
