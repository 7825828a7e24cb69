/**
 * The spec's PDF limits (inference-billing-api section 8). The server reads its configuration
 * defaults from here so the contract and the configuration cannot drift apart.
 */
export const pdfLimits = {
  maxFileBytes: 16_777_216,
  uploadTimeoutMs: 10_000,
  queueTimeoutMs: 2_000,
  workerStartTimeoutMs: 30_000,
  parseTimeoutMs: 15_000,
  parserWorkerMemoryBytes: 805_306_368,
  parserWorkers: 2,
  maxPendingRequests: 2,
  defaultMaxPages: 32,
  hardMaxPages: 100,
  defaultMaxChars: 200_000,
  hardMaxChars: 400_000,
  /**
   * Sections a document extraction answers at most. Headings cost no `max_chars`, so 4 MiB of
   * `<h1>x</h1>` made 400,000 sections: a 37 MiB answer and a second of serialising it.
   */
  maxDocumentSections: 10_000,
  /**
   * Characters of a section heading (and of the title taken from one). Headings cost no
   * `max_chars`: `# a` then 16 MiB on one line was a 16 MiB heading, answered twice (heading and
   * title), 32 MiB serialised at once.
   */
  maxHeadingChars: 1_024,
} as const;

/** A base64 body of `maxFileBytes` plus room for the rest of the JSON request. */
export const pdfJsonBodyLimitBytes = Math.ceil(pdfLimits.maxFileBytes / 3) * 4 + 65_536;

/** The nine Server-Timing phases of the upload route, in the order they happen. */
export const pdfTimingPhases = [
  'admission_ms',
  'upload_read_ms',
  'source_ms',
  'staging_ms',
  'worker_start_ms',
  'worker_queue_ms',
  'worker_roundtrip_ms',
  'executor_dispatch_ms',
  'total_ms',
] as const;
export type PdfTimingPhase = (typeof pdfTimingPhases)[number];
