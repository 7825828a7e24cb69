import pino, { type Logger } from 'pino';
import { traceLogFields, tracingWanted } from './tracing.ts';

/**
 * Structured JSON logs. Request lines carry id, route, status, latency and principal kind;
 * headers are never logged, and these paths are redacted in case a caller logs an object
 * holding a credential. `destination` (default stdout) lets benches and tools read the lines.
 * When traces are on, each line made inside a span carries its `trace_id` and `span_id`.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'svc' },
    redact: {
      paths: ['authorization', 'token', 'secret', '*.authorization', '*.token', '*.secret', '*.password', 'headers.authorization'],
      censor: '[redacted]',
    },
    ...(tracingWanted() ? { mixin: traceLogFields } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}
