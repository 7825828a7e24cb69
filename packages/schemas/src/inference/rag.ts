import { z } from 'zod';
import { inferenceLimits as limits } from './limits.ts';
import { InferenceUsage, optionalModel, ServedBy, StreamErrorMember } from './usage.ts';

const documentText = z.string().max(limits.ragMaxDocumentChars, `a document holds at most ${limits.ragMaxDocumentChars} characters`);

export const RagRequest = z
  .strictObject({
    question: z.string().min(1).max(limits.ragMaxQuestionChars),
    documents: z
      .array(z.union([documentText, z.strictObject({ id: z.string().max(256).optional(), text: documentText })]))
      .max(limits.ragMaxDocuments, `at most ${limits.ragMaxDocuments} documents`)
      .default([]),
    sources: z
      .strictObject({
        blackboard_key: z.string().max(512).optional().describe('A blackboard channel key: its current posts join the documents.'),
        artifact_ids: z
          .array(
            z
              .string()
              .max(256)
              .regex(/^[^\u0000]*$/, 'the NUL character is not allowed'),
          )
          .max(20)
          .optional()
          .describe('Catalog artifacts: their descriptions join the documents.'),
      })
      .optional(),
    top_k: z.number().int().min(1).max(limits.ragMaxTopK).default(4).describe('Passages retrieved and cited at most.'),
    model: optionalModel,
    stream: z
      .boolean()
      .default(false)
      .describe('Answer a server-sent event stream: `passage-retrieved` per passage, `answer-delta` pieces, then `answer-completed`.'),
  })
  .superRefine((body, context) => {
    const total = body.documents.reduce((sum, document) => sum + (typeof document === 'string' ? document.length : document.text.length), 0);
    if (total > limits.ragMaxTotalChars)
      context.addIssue({ code: 'custom', path: ['documents'], message: `the documents hold at most ${limits.ragMaxTotalChars} characters in all` });
    if (body.documents.length === 0 && !body.sources)
      context.addIssue({ code: 'custom', path: ['documents'], message: 'send documents, or name sources to read them from' });
  })
  .meta({ id: 'RagRequest' });
export type RagRequest = z.input<typeof RagRequest>;
export type RagBody = z.output<typeof RagRequest>;

/** A passage the answer rests on: which document, where in it (UTF-16 offsets, end exclusive), and its text. */
export const RagPassage = z
  .object({
    document_index: z.number().int().nonnegative(),
    document_id: z.string().optional(),
    start: z.number().int().nonnegative(),
    end: z.number().int().nonnegative(),
    text: z.string(),
    score: z.number(),
  })
  .meta({ id: 'RagPassage' });
export type RagPassage = z.infer<typeof RagPassage>;

export const RagResponse = z
  .object({
    answer: z.string().describe('Extractive engines quote the passages, each quote followed by its citation marker [n].'),
    citations: z.array(RagPassage.extend({ marker: z.number().int().min(1) })).describe('The passages the answer cites; `marker` n is the [n] in the answer.'),
    passages: z.array(RagPassage).describe('Every passage retrieved, best first.'),
    answerable: z.boolean().describe('False when no passage matched the question well enough to answer from.'),
    extractive: z.boolean(),
    model: z.string(),
    usage: InferenceUsage,
    svc: ServedBy.optional(),
  })
  .meta({ id: 'RagResponse' });
export type RagResponse = z.infer<typeof RagResponse>;

export const ragStreamEventNames = { passage: 'passage-retrieved', delta: 'answer-delta', completed: 'answer-completed', error: 'error' } as const;
export const RagStreamEvent = z.union([RagPassage, z.object({ text: z.string() }), RagResponse, StreamErrorMember]).meta({ id: 'RagStreamEvent' });
