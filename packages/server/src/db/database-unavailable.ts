import { BaseError, ConnectionError } from 'sequelize';
import { ServiceError } from '../service-error.ts';

/** How long a caller is asked to wait: `/healthz` sees an outage within about 2 s, and a restarted database was served again 1.1 s after it came back. */
const RETRY_AFTER_SECONDS = 2;

/**
 * SQLSTATEs that say the database, not the statement, failed: class 08 (connection exception),
 * 57P01-57P03 (shut down by the operator, crashed, starting up), 53300 (too many connections).
 */
function isOutageSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** pg's messages for a connection lost or never made, which carry no SQLSTATE. */
const LOST_CONNECTION =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|connect E[A-Z]+|read ECONNRESET|write EPIPE)/;

/**
 * Whether an error thrown by the `pg` driver says the connection failed (lost, refused, timed out)
 * or the server is going away, rather than that a statement was refused. A pg error with a
 * SQLSTATE is the database answering: only the outage states count.
 */
export function isPgConnectionFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return isOutageSqlState(code);
  return typeof message === 'string' && LOST_CONNECTION.test(message);
}

/**
 * Whether an error comes from the database being unreachable: Sequelize's connection errors
 * (refused, timed out, host not found, the pool's acquire deadline), or a query that failed
 * because its connection did (Sequelize's `parent`, or a ServiceError made from one). Only errors
 * of the database's own driver are looked at, so a lost connection to an upstream (a fetch's
 * ECONNRESET) is never taken for the database's.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof ConnectionError) return true;
  if (error instanceof BaseError) return isPgConnectionFailure((error as BaseError & { parent?: unknown }).parent);
  return false;
}

/**
 * 503 `database_unavailable`, retryable. A transaction cut off with its connection is rolled
 * back; a call of several steps may have made some, so a write is retried with its
 * Idempotency-Key, as after any 5xx.
 */
export function databaseUnavailableError(cause: unknown): ServiceError {
  return new ServiceError('database_unavailable', 'The database cannot be reached right now; retry after Retry-After.', {
    retryAfterSeconds: RETRY_AFTER_SECONDS,
    retryable: true,
    cause,
  });
}
