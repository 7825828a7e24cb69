import { z } from 'zod';
import { PdfEngineName, pdfLimits } from '@svc/schemas';
import { integer } from '../../env-values.ts';

const milliseconds = integer(1, 600_000, 'milliseconds');

/**
 * PDF parser workers, deadlines and limits. Defaults are the spec's limits (section 8); every one
 * can be changed from the environment, which is how the tests make deadlines small.
 */
export const pdfConfigFrom = z
  .object({
    SVC_PDF_ENGINE: PdfEngineName.default('pdfium'),
    SVC_PDF_WORKERS: integer(1, 64, 'a worker count').default(pdfLimits.parserWorkers),
    SVC_PDF_MAX_PENDING: integer(0, 1024, 'a request count').default(pdfLimits.maxPendingRequests),
    SVC_PDF_QUEUE_TIMEOUT_MS: milliseconds.default(pdfLimits.queueTimeoutMs),
    SVC_PDF_WORKER_START_TIMEOUT_MS: milliseconds.default(pdfLimits.workerStartTimeoutMs),
    SVC_PDF_PARSE_TIMEOUT_MS: milliseconds.default(pdfLimits.parseTimeoutMs),
    SVC_PDF_WORKER_MEMORY_BYTES: integer(64 * 1024 * 1024, 64 * 1024 ** 3, 'bytes').default(pdfLimits.parserWorkerMemoryBytes),
    SVC_PDF_RATE_LIMIT: integer(0, 1_000_000, 'an extraction count').default(120),
    SVC_PDF_RATE_WINDOW_SECONDS: integer(1, 86_400, 'seconds').default(60),
    SVC_PDF_FETCH_TIMEOUT_MS: milliseconds.default(pdfLimits.uploadTimeoutMs),
  })
  .transform((env) => ({
    /** `pdfium` (BSD-3-Clause/Apache-2.0, default), `pdfjs` (Apache-2.0) or `mupdf` (AGPL-3.0, opt-in). */
    engine: env.SVC_PDF_ENGINE,
    workers: env.SVC_PDF_WORKERS,
    /** Requests that may wait for a worker beyond those being parsed. */
    maxPending: env.SVC_PDF_MAX_PENDING,
    queueTimeoutMs: env.SVC_PDF_QUEUE_TIMEOUT_MS,
    workerStartTimeoutMs: env.SVC_PDF_WORKER_START_TIMEOUT_MS,
    parseTimeoutMs: env.SVC_PDF_PARSE_TIMEOUT_MS,
    workerMemoryBytes: env.SVC_PDF_WORKER_MEMORY_BYTES,
    /** Extractions per principal per window; 0 turns the limit off. */
    rateLimit: env.SVC_PDF_RATE_LIMIT,
    rateWindowSeconds: env.SVC_PDF_RATE_WINDOW_SECONDS,
    fetchTimeoutMs: env.SVC_PDF_FETCH_TIMEOUT_MS,
  }));

export type PdfConfig = z.output<typeof pdfConfigFrom>;

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** pdf-config.ts's settings, read by the feature list's pdf line. */
    pdf: PdfConfig;
  }
}
