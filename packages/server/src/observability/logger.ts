import pino, { type Logger } from 'pino';

/**
 * Structured JSON logs. Request lines carry id, route, status, latency and principal kind;
 * headers are never logged, and these paths are redacted in case a caller logs an object
 * holding a credential.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'svc' },
    redact: { paths: ['authorization', 'token', 'secret', '*.authorization', '*.token', '*.secret', '*.password', 'headers.authorization'], censor: '[redacted]' },
  });
}
