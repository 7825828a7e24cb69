import { z } from 'zod';
import { cursorList, cursorQuery } from '../cursor-list.ts';
import { jobLimits, batchJobRequestSchemaId } from './limits.ts';
import { jobItemSchemas, type jobOperations, jobResultSchemas, JobOperation } from './operations.ts';

const items = <S extends z.ZodType>(item: S) =>
  z
    .array(item)
    .min(1, 'send at least one item')
    .max(jobLimits.maxItems, `a job holds at most ${jobLimits.maxItems} items`)
    .describe(`1..${jobLimits.maxItems} items, each the input the operation takes on its own route.`);

const submission = <O extends (typeof jobOperations)[number]>(operation: O) =>
  z.strictObject({
    schema: z.literal(batchJobRequestSchemaId).describe(`Always \`${batchJobRequestSchemaId}\`.`),
    operation: z.literal(operation),
    items: items(jobItemSchemas[operation]),
  });

/**
 * A batch job: one operation over 1..8 items. Every item is checked at submission with the
 * operation's own request schema, so a job that is accepted never fails for malformed input.
 */
export const BatchJobRequest = z
  .discriminatedUnion('operation', [
    submission('embeddings'),
    submission('rerank'),
    submission('classify'),
    submission('summarize'),
    submission('pdf_extract'),
    submission('calculate'),
    submission('validate_json'),
    submission('resolve_link'),
  ])
  .meta({ id: 'BatchJobRequest' });
export type BatchJobRequest = z.input<typeof BatchJobRequest>;
export type BatchJobBody = z.output<typeof BatchJobRequest>;

export const jobStatuses = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export const JobStatus = z.enum(jobStatuses).meta({ id: 'JobStatus' });
export type JobStatus = z.infer<typeof JobStatus>;
/** Statuses a job never leaves. */
export const finishedJobStatuses = ['completed', 'failed', 'cancelled'] as const satisfies readonly JobStatus[];

export const JobId = z
  .string()
  .regex(/^job_[A-Za-z0-9_-]{16,64}$/, 'a job id looks like job_ followed by 16..64 letters, digits, _ or -')
  .meta({ id: 'JobId' });
export const JobIdParams = z.object({ job_id: JobId });

export const JobSubmitHeaders = z.object({
  'idempotency-key': z
    .string({ error: 'the Idempotency-Key header is required: send a unique string (a UUID) per job, and the same one when retrying it' })
    .min(1)
    .max(jobLimits.idempotencyKeyMaxChars)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
    .describe('Required. Names this submission: the same key with the same body answers the first response again.'),
});

export const JobItemStatus = z.enum(['pending', 'running', 'succeeded', 'failed']).meta({ id: 'JobItemStatus' });

export const JobError = z.object({ code: z.string(), message: z.string() }).meta({ id: 'JobError' });

export const BatchJob = z
  .object({
    object: z.literal('job'),
    job_id: JobId,
    schema: z.literal(batchJobRequestSchemaId),
    operation: JobOperation,
    status: JobStatus,
    attempts: z.number().int().nonnegative().describe('Runs started so far (a run ended by a dead server counts).'),
    max_attempts: z.number().int().positive(),
    created_at: z.iso.datetime(),
    started_at: z.iso.datetime().nullable().describe('When the latest attempt started.'),
    finished_at: z.iso.datetime().nullable(),
    cancelled_at: z.iso.datetime().nullable(),
    expires_at: z.iso.datetime().nullable().describe('When a finished job and its result are dropped at the latest (the row cap may drop it sooner).'),
    progress: z.object({ total: z.number().int(), succeeded: z.number().int(), failed: z.number().int() }),
    items: z.array(z.object({ index: z.number().int().nonnegative(), status: JobItemStatus, error_code: z.string().optional() })),
    error: JobError.nullable().describe('Why a failed job failed (`job_attempts_exhausted`, `job_result_too_large`, ...).'),
  })
  .meta({ id: 'BatchJob' });
export type BatchJob = z.infer<typeof BatchJob>;

/** A page of the caller's jobs, newest first: the same view as `GET /v1/jobs/:job_id`. */
export const BatchJobListResponse = cursorList(BatchJob, { object: true }).meta({ id: 'BatchJobListResponse' });
export type BatchJobListResponse = z.infer<typeof BatchJobListResponse>;

export const JobPage = cursorQuery({ max: 100, default: 20 }).extend({
  status: JobStatus.optional().describe('Only jobs in this status.'),
});

export const JobItemOutcome = z
  .discriminatedUnion('status', [
    z.object({
      index: z.number().int().nonnegative(),
      status: z.literal('succeeded'),
      result: z
        .union([
          jobResultSchemas.embeddings,
          jobResultSchemas.rerank,
          jobResultSchemas.classify,
          jobResultSchemas.summarize,
          jobResultSchemas.pdf_extract,
          jobResultSchemas.calculate,
          jobResultSchemas.validate_json,
          jobResultSchemas.resolve_link,
        ])
        .describe("The operation's own answer (the same shape its HTTP route gives)."),
    }),
    z.object({ index: z.number().int().nonnegative(), status: z.literal('failed'), error: JobError }),
  ])
  .meta({ id: 'JobItemOutcome' });
export type JobItemOutcome = z.infer<typeof JobItemOutcome>;

export const BatchJobResult = z
  .object({
    object: z.literal('job.result'),
    job_id: JobId,
    operation: JobOperation,
    status: z.enum(['completed', 'failed']),
    items: z.array(JobItemOutcome).describe('One entry per item, in request order. A failed job lists what finished before it failed.'),
    error: JobError.nullable(),
  })
  .meta({ id: 'BatchJobResult' });
export type BatchJobResult = z.infer<typeof BatchJobResult>;
