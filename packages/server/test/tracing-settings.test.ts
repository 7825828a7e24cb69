import test from 'ava';
import { querySummary } from '../src/db/query-trace.ts';
import { tracingWanted } from '../src/observability/tracing.ts';

test('traces are wanted only with an OTLP endpoint, and the SDK’s own switches turn them off', (t) => {
  t.false(tracingWanted({}));
  t.false(tracingWanted({ OTEL_SERVICE_NAME: 'svc' }));
  t.true(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }));
  t.true(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }));
  t.false(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }));
  t.false(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: ' TRUE ' }));
  t.true(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'false' }));
  t.false(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' }));
  t.true(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'otlp' }));
});

test('a query span is named by the statement’s first words, stopping before anything that could carry a value', (t) => {
  t.is(querySummary('SELECT 1'), 'SELECT');
  t.is(querySummary('  INSERT INTO svc_rate_counters (key, window_start, count) VALUES ($1, $2, 1)'), 'INSERT INTO svc_rate_counters');
  t.is(querySummary("SELECT 'sk-secret' AS leaked"), 'SELECT');
  t.is(querySummary('UPDATE credits SET balance = balance - :amount WHERE id = :id'), 'UPDATE credits SET balance');
  t.is(querySummary('DELETE FROM sessions\nWHERE token_hash = $1'), 'DELETE FROM sessions WHERE');
  t.is(querySummary({ query: 'SELECT credits.balance FROM credits', values: ['x'] }), 'SELECT credits.balance FROM credits');
  t.is(querySummary('$1'), 'query');
  t.is(querySummary(undefined), 'query');
  // At most four words of at most 127 characters, read from the first 200: bounded whatever the statement’s length.
  t.is(querySummary(`SELECT ${'a'.repeat(500)}`), 'SELECT');
  t.is(querySummary(`SELECT ${'a'.repeat(127)} FROM`), `SELECT ${'a'.repeat(127)} FROM`);
  t.is(querySummary(`SELECT ${'a'.repeat(128)} FROM`), 'SELECT');
  t.is(querySummary('WITH moved AS (SELECT 1) SELECT * FROM moved'), 'WITH moved AS');
});
