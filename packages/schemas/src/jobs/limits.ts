/**
 * Batch job limits (spec: inference-billing-api section 8). The server's configuration defaults
 * to these; `maxItems` and `maxRequestBytes` are part of the contract itself (schema and body cap).
 */
export const jobLimits = {
  maxItems: 8,
  maxRequestBytes: 524_288,
  maxResultBytes: 8_388_608,
  maxActivePerPrincipal: 2,
  maxActiveGlobal: 32,
  maxActiveItemsPerPrincipal: 16,
  maxActiveItemsGlobal: 256,
  maxAttempts: 3,
  resultTtlSeconds: 86_400,
  maxRetainedPerPrincipal: 32,
  maxRetainedGlobal: 256,
  /** An Idempotency-Key is 1..255 printable ASCII characters (Stripe's limit). */
  idempotencyKeyMaxChars: 255,
  /** Idempotency keys are kept at least this long (Stripe: 24 hours). */
  idempotencyKeyTtlSeconds: 86_400,
  calculateMaxExpressionChars: 1000,
  /**
   * calculate runs in a worker thread; past this it is stopped and the item fails with
   * `calculate_too_costly`. Evaluating 1000 characters of whitelisted arithmetic takes well under
   * a millisecond: the figure is for the first item in a fresh thread, which loads mathjs (1.2-1.8 s
   * alone, several times that on a loaded machine).
   */
  calculateDeadlineMs: 15_000,
  /** validate_json: the schema's JSON at most this many characters, nested at most this deep. */
  validateJsonSchemaMaxChars: 65_536,
  validateJsonSchemaMaxDepth: 32,
  /** validate_json: the document's JSON at most this many characters. */
  validateJsonDocumentMaxChars: 262_144,
  /** validate_json runs in a worker thread; past this it is stopped and the item fails with `json_validation_too_costly`. */
  validateJsonDeadlineMs: 5_000,
} as const;

/** The request schema id every submission names (spec section 9). */
export const batchJobRequestSchemaId = 'svc.batch-job-request.v1';
