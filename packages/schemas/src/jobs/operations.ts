import { z } from 'zod';
import { ClassifyRequest, ClassifyResponse } from '../inference/classify.ts';
import { EmbeddingsRequest, EmbeddingsResponse } from '../inference/embeddings.ts';
import { RerankRequest, RerankResponse } from '../inference/rerank.ts';
import { SummarizeRequest, SummarizeResponse } from '../inference/summarize.ts';
import { PdfExtraction, PdfExtractRequest } from '../pdf/extraction.ts';
import { jobLimits } from './limits.ts';

/** Operations a job may run. Chat (the paid operation) is not one of them. */
export const jobOperations = ['embeddings', 'rerank', 'classify', 'summarize', 'pdf_extract', 'calculate', 'validate_json', 'resolve_link'] as const;
export const JobOperation = z.enum(jobOperations).meta({ id: 'JobOperation' });
export type JobOperation = z.infer<typeof JobOperation>;

export const CalculateItem = z
  .strictObject({
    expression: z
      .string()
      .min(1)
      .max(jobLimits.calculateMaxExpressionChars, `an expression holds at most ${jobLimits.calculateMaxExpressionChars} characters`)
      .describe(
        `Arithmetic: numbers, + - * / % ^, parentheses, the constants pi, e, tau, phi, and the functions abs, sqrt, cbrt, exp, log (natural, or log(x, base)), log10, log2, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, floor, ceil, round, trunc (fix), sign, min, max, hypot, pow, mod. Nothing else is reachable. Evaluation runs off the event loop under a ${jobLimits.calculateDeadlineMs} ms deadline; past it the item fails with \`calculate_too_costly\`.`,
      ),
  })
  .meta({ id: 'CalculateItem' });
export const CalculateResult = z
  .object({
    expression: z.string(),
    value: z.number().describe('A finite IEEE 754 double; an expression whose value is not finite fails with `calculate_not_finite`.'),
  })
  .meta({ id: 'CalculateResult' });
export type CalculateResult = z.infer<typeof CalculateResult>;

/** Characters of a value's JSON, and how deeply its objects and arrays nest (without recursion: the value is the caller's). */
const jsonChars = (value: unknown) => JSON.stringify(value)?.length ?? 0;
function jsonDepth(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}

export const ValidateJsonItem = z
  .strictObject({
    schema: z
      .union([z.record(z.string(), z.unknown()), z.boolean()])
      .refine(
        (schema) => jsonChars(schema) <= jobLimits.validateJsonSchemaMaxChars,
        `a schema's JSON holds at most ${jobLimits.validateJsonSchemaMaxChars} characters`,
      )
      .refine(
        (schema) => jsonDepth(schema) <= jobLimits.validateJsonSchemaMaxDepth,
        `a schema nests objects and arrays at most ${jobLimits.validateJsonSchemaMaxDepth} levels deep`,
      )
      .describe(
        `A JSON Schema (draft 2020-12; draft-07 documents work too), at most ${jobLimits.validateJsonSchemaMaxChars} characters of JSON nested at most ${jobLimits.validateJsonSchemaMaxDepth} levels deep. \`$ref\` to anything outside the schema is not fetched. ` +
          '`pattern` and `patternProperties` run on RE2 (linear time, Unicode mode): lookaround and backreferences are not supported, and such a schema fails with `json_schema_invalid`. ' +
          `Formats are ajv-formats' fast set (\`url\` up to 2048 characters). Validation runs off the event loop under a ${jobLimits.validateJsonDeadlineMs} ms deadline; past it (or its memory cap) the item fails with \`json_validation_too_costly\`.`,
      ),
    document: z
      .unknown()
      .refine(
        (document) => jsonChars(document) <= jobLimits.validateJsonDocumentMaxChars,
        `a document's JSON holds at most ${jobLimits.validateJsonDocumentMaxChars} characters`,
      )
      .describe(`The JSON document to validate, at most ${jobLimits.validateJsonDocumentMaxChars} characters of JSON.`),
  })
  .meta({ id: 'ValidateJsonItem' });
export const JsonSchemaViolation = z
  .object({
    instance_path: z.string().describe('JSON Pointer to the offending part of the document (`` for the root).'),
    schema_path: z.string(),
    keyword: z.string(),
    message: z.string(),
  })
  .meta({ id: 'JsonSchemaViolation' });
export const ValidateJsonResult = z
  .object({ valid: z.boolean(), errors: z.array(JsonSchemaViolation).describe('Every violation found (empty when valid).') })
  .meta({ id: 'ValidateJsonResult' });
export type ValidateJsonResult = z.infer<typeof ValidateJsonResult>;

export const ResolveLinkItem = z
  .strictObject({ url: z.url({ protocol: /^https$/, error: 'Only https URLs are resolved.' }).max(2048) })
  .meta({ id: 'ResolveLinkItem' });
export const ResolveLinkResult = z
  .object({
    url: z.string().describe('The URL as given.'),
    final_url: z.string().describe('Where the redirects ended.'),
    status: z.number().int().describe('HTTP status of the final answer.'),
    content_type: z.string().nullable().describe('Media type of the final answer, without parameters; null when not stated.'),
    redirects: z
      .array(z.object({ url: z.string(), status: z.number().int() }))
      .describe('Each redirect followed, in order: the URL that redirected and its status.'),
    title: z
      .string()
      .nullable()
      .describe('The `<title>` of an HTML page (from its first 256 KiB, whitespace runs as one space, at most 1024 characters), null otherwise.'),
  })
  .meta({ id: 'ResolveLinkResult' });
export type ResolveLinkResult = z.infer<typeof ResolveLinkResult>;

/** What each operation takes for one item: the same schema as its HTTP route, or its own. */
export const jobItemSchemas = {
  embeddings: EmbeddingsRequest,
  rerank: RerankRequest,
  classify: ClassifyRequest,
  summarize: SummarizeRequest,
  pdf_extract: PdfExtractRequest,
  calculate: CalculateItem,
  validate_json: ValidateJsonItem,
  resolve_link: ResolveLinkItem,
} as const satisfies Record<JobOperation, z.ZodType>;

/** What one item of each operation gives back when it succeeds. */
export const jobResultSchemas = {
  embeddings: EmbeddingsResponse,
  rerank: RerankResponse,
  classify: ClassifyResponse,
  summarize: SummarizeResponse,
  pdf_extract: PdfExtraction,
  calculate: CalculateResult,
  validate_json: ValidateJsonResult,
  resolve_link: ResolveLinkResult,
} as const satisfies Record<JobOperation, z.ZodType>;

export type JobItemInput<O extends JobOperation> = z.input<(typeof jobItemSchemas)[O]>;
