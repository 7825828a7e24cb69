import type { ErrorBody, ValidationIssue } from '@svc/schemas';

const MARKER = Symbol.for('svc.client.error');

/**
 * Every error the client throws. `code` is the server's stable code (or a client-side one such
 * as `connection_error`), `requestId` the server's `x-request-id` when there was an answer.
 * `SvcError.isInstance` works across duplicate copies of this package.
 */
export class SvcError extends Error {
  readonly [MARKER] = true;
  readonly status: number | undefined;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly body: unknown;
  readonly headers: Headers | undefined;

  constructor(message: string, init: { status?: number; code: string; requestId?: string; body?: unknown; headers?: Headers; cause?: unknown }) {
    super(message, { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.body = init.body;
    this.headers = init.headers;
  }

  static isInstance(error: unknown): error is SvcError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[MARKER] === true;
  }
}

/** The server answered 4xx. */
export class ClientError extends SvcError {}
export class BadRequestError extends ClientError {}
export class AuthenticationError extends ClientError {}
export class PaymentRequiredError extends ClientError {}
export class PermissionDeniedError extends ClientError {}
export class NotFoundError extends ClientError {}
export class ConflictError extends ClientError {}
export class PayloadTooLargeError extends ClientError {}
export class UnsupportedMediaTypeError extends ClientError {}
export class ValidationError extends ClientError {
  get issues(): ValidationIssue[] {
    return ((this.body as ErrorBody | undefined)?.detail ?? []) as ValidationIssue[];
  }
}
export class RateLimitError extends ClientError {
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  get retryAfterSeconds(): number | undefined {
    const header = this.headers?.get('retry-after');
    return header && /^\d+$/.test(header) ? Number(header) : undefined;
  }
}
/** The server answered 5xx. */
export class ServerError extends SvcError {}
export class ServiceUnavailableError extends ServerError {}
export class GatewayTimeoutError extends ServerError {}
/** No answer: the server could not be reached. */
export class ConnectionError extends SvcError {}
/** No answer in time. */
export class TimeoutError extends SvcError {}

const byStatus: Record<number, typeof SvcError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: PaymentRequiredError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  422: ValidationError,
  429: RateLimitError,
  503: ServiceUnavailableError,
  504: GatewayTimeoutError,
};

/** Builds the typed error for an answer the server gave. */
export function errorFromResponse(status: number, headers: Headers, body: unknown): SvcError {
  const parsed = typeof body === 'object' && body !== null ? (body as Partial<ErrorBody> & { error_description?: string }) : undefined;
  const ErrorClass = byStatus[status] ?? (status >= 500 ? ServerError : status >= 400 ? ClientError : SvcError);
  // OAuth endpoints answer RFC 6749 bodies: `error` is the code, `error_description` the message.
  const message =
    parsed?.error_description !== undefined
      ? `${parsed.error}: ${parsed.error_description}`
      : (parsed?.error ?? (typeof body === 'string' && body ? body.slice(0, 300) : `HTTP ${status}`));
  return new ErrorClass(message, {
    status,
    code: parsed?.code ?? `http_${status}`,
    requestId: parsed?.request_id ?? headers.get('x-request-id') ?? undefined,
    body,
    headers,
  });
}
