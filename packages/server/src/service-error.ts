import { statusForCode, type ErrorCode, type ValidationIssue } from '@svc/schemas';

export interface ServiceErrorOptions {
  status?: number;
  detail?: ValidationIssue[];
  headers?: Record<string, string>;
  retryAfterSeconds?: number;
  retryable?: boolean;
  cause?: unknown;
}

/**
 * The one error a handler or service throws. Its code is stable and documented in
 * `errorCodes`; its message is safe to show. Anything else thrown becomes `internal_error`
 * with a generic message, so no internal detail leaves the server.
 */
export class ServiceError extends Error {
  readonly code: string;
  readonly status: number;
  readonly detail?: ValidationIssue[];
  readonly headers: Record<string, string>;
  readonly retryAfterSeconds?: number;
  readonly retryable?: boolean;

  constructor(code: ErrorCode | `${ErrorCode}:${string}`, message: string, options: ServiceErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = options.status ?? statusForCode(code);
    this.detail = options.detail;
    this.headers = { ...options.headers };
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.retryable = options.retryable;
    if (options.retryAfterSeconds !== undefined) this.headers['retry-after'] = String(Math.max(0, Math.ceil(options.retryAfterSeconds)));
  }
}

export const isServiceError = (error: unknown): error is ServiceError => error instanceof ServiceError;
