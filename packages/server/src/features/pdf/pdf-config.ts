import { z } from 'zod';
import { PdfEngineName, pdfLimits } from '@svc/schemas';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/**
 * The PDF workers' settings. Defaults are the spec's limits (section 8); every one can be
 * changed from the environment, which is how the tests make deadlines small.
 */
export const pdfEnvShape = {
  SVC_PDF_ENGINE: PdfEngineName.default('pdfium'),
  SVC_PDF_WORKERS: int(1, 64).default(pdfLimits.parserWorkers),
  SVC_PDF_MAX_PENDING: int(0, 1024).default(pdfLimits.maxPendingRequests),
  SVC_PDF_QUEUE_TIMEOUT_MS: int(1, 600_000).default(pdfLimits.queueTimeoutMs),
  SVC_PDF_WORKER_START_TIMEOUT_MS: int(1, 600_000).default(pdfLimits.workerStartTimeoutMs),
  SVC_PDF_PARSE_TIMEOUT_MS: int(1, 600_000).default(pdfLimits.parseTimeoutMs),
  SVC_PDF_WORKER_MEMORY_BYTES: int(64 * 1024 * 1024, 64 * 1024 ** 3).default(pdfLimits.parserWorkerMemoryBytes),
  SVC_PDF_RATE_LIMIT: int(0, 1_000_000).default(120),
  SVC_PDF_RATE_WINDOW_SECONDS: int(1, 86_400).default(60),
  SVC_PDF_FETCH_TIMEOUT_MS: int(1, 600_000).default(pdfLimits.uploadTimeoutMs),
};

export interface PdfConfig {
  /** `pdfium` (BSD-3-Clause/Apache-2.0, default), `pdfjs` (Apache-2.0) or `mupdf` (AGPL-3.0, opt-in). */
  engine: PdfEngineName;
  workers: number;
  /** Requests that may wait for a worker beyond those being parsed. */
  maxPending: number;
  queueTimeoutMs: number;
  workerStartTimeoutMs: number;
  parseTimeoutMs: number;
  workerMemoryBytes: number;
  /** Extractions per principal per window; 0 turns the limit off. */
  rateLimit: number;
  rateWindowSeconds: number;
  fetchTimeoutMs: number;
}

type PdfEnv = { [K in keyof typeof pdfEnvShape]: z.output<(typeof pdfEnvShape)[K]> };

export function toPdfConfig(env: PdfEnv): PdfConfig {
  return {
    engine: env.SVC_PDF_ENGINE,
    workers: env.SVC_PDF_WORKERS,
    maxPending: env.SVC_PDF_MAX_PENDING,
    queueTimeoutMs: env.SVC_PDF_QUEUE_TIMEOUT_MS,
    workerStartTimeoutMs: env.SVC_PDF_WORKER_START_TIMEOUT_MS,
    parseTimeoutMs: env.SVC_PDF_PARSE_TIMEOUT_MS,
    workerMemoryBytes: env.SVC_PDF_WORKER_MEMORY_BYTES,
    rateLimit: env.SVC_PDF_RATE_LIMIT,
    rateWindowSeconds: env.SVC_PDF_RATE_WINDOW_SECONDS,
    fetchTimeoutMs: env.SVC_PDF_FETCH_TIMEOUT_MS,
  };
}
