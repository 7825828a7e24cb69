import type { Sequelize } from 'sequelize';
import { endSpanFailed, otel, tracer, tracingOn } from '../observability/tracing.ts';

/**
 * Words of a statement that may name it: SQL keywords and identifiers (a qualified name of two
 * PostgreSQL identifiers at most), never a literal, a number or a placeholder.
 */
const NAME_WORD = /^[A-Za-z_][A-Za-z0-9_.]{0,126}$/;

/**
 * What a query's span is called: its first words up to the first one that could carry a value
 * (`SELECT credits.balance FROM`, `INSERT INTO usage_events`), at most four. The statement's
 * parameters and the rest of its text are never recorded.
 */
export function querySummary(sql: unknown): string {
  const text = typeof sql === 'string' ? sql : typeof (sql as { query?: unknown })?.query === 'string' ? (sql as { query: string }).query : '';
  const words: string[] = [];
  for (const word of text.trimStart().slice(0, 200).split(/\s+/)) {
    if (words.length === 4 || !NAME_WORD.test(word)) break;
    words.push(word);
  }
  return words.length > 0 ? words.join(' ') : 'query';
}

/**
 * A span for every query made inside a traced request while tracing is on (off, nothing is
 * wrapped; housekeeping outside a request is not traced). Sequelize
 * sends every statement, its own transaction statements included, through `sequelize.query`, so
 * the instance's method is wrapped: the span covers waiting for a connection and the round trip.
 */
export function traceQueries(sequelize: Sequelize): void {
  if (!tracingOn()) return;
  const query = sequelize.query.bind(sequelize) as (...args: unknown[]) => Promise<unknown>;
  const { context, SpanKind, trace } = otel();
  const traced = async (...args: unknown[]): Promise<unknown> => {
    // Housekeeping and health checks outside any request would each be a trace of one query: noise.
    if (!trace.getActiveSpan()) return query(...args);
    const summary = querySummary(args[0]);
    const span = tracer().startSpan(summary, {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system.name': 'postgresql', 'db.query.summary': summary, 'db.operation.name': summary.split(' ')[0]!.toUpperCase() },
    });
    try {
      const result = await context.with(trace.setSpan(context.active(), span), () => query(...args));
      span.end();
      return result;
    } catch (error) {
      endSpanFailed(span, error);
      throw error;
    }
  };
  (sequelize as unknown as { query: typeof traced }).query = traced;
}
