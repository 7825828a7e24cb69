import type * as OpenTelemetryApi from '@opentelemetry/api';
import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';

/**
 * Traces (OpenTelemetry), off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or its traces-only form) is
 * set. Off, neither the SDK nor even the API is loaded (the API alone is about 50 modules and
 * 15 ms of CPU at start): every span helper checks `tracingOn()` first, so a request pays one
 * boolean test per hook. On, the official Node SDK is started once per process and reads the
 * standard OTEL_* variables itself (protocol, headers, sampler, batch sizes, resource attributes,
 * OTEL_SERVICE_NAME).
 */
export type Otel = typeof OpenTelemetryApi;

let api: Otel | undefined;
let svcTracer: Tracer | undefined;
let starting: Promise<boolean> | undefined;

/** Whether the environment asks for traces: an OTLP endpoint, and neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none. */
export function tracingWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return false;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return !(env.OTEL_TRACES_EXPORTER ?? '').split(',').some((name) => name.trim() === 'none');
}

/** True once the SDK runs in this process. */
export function tracingOn(): boolean {
  return svcTracer !== undefined;
}

/** The OpenTelemetry API; only for code that checked `tracingOn()`. */
export function otel(): Otel {
  if (!api) throw new Error('tracing is off: check tracingOn() first');
  return api;
}

/** The tracer every svc span comes from; only for code that checked `tracingOn()`. */
export function tracer(): Tracer {
  if (!svcTracer) throw new Error('tracing is off: check tracingOn() first');
  return svcTracer;
}

/** `svc-server` unless the operator named the service (OTEL_SERVICE_NAME, or service.name in OTEL_RESOURCE_ATTRIBUTES). */
function defaultServiceName(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_SERVICE_NAME?.trim()) return undefined;
  if (/(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '')) return undefined;
  return 'svc-server';
}

/**
 * Starts the SDK when the environment asks for traces (once per process: the OpenTelemetry API
 * is process-wide, so a second server in the same process shares it). svc sends traces only:
 * its metrics are Prometheus's (/metrics) and its logs are pino's, so the SDK's metric and log
 * exporters are not started. The SDK's own complaints (a collector that cannot be reached) go
 * to the log as warnings, unless OTEL_LOG_LEVEL sends them to the console.
 */
export function startTracing(log: Logger, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (!tracingWanted(env)) return Promise.resolve(false);
  starting ??= (async () => {
    const [loadedApi, { NodeSDK }] = await Promise.all([import('@opentelemetry/api'), import('@opentelemetry/sdk-node')]);
    const serviceName = defaultServiceName(env);
    const sdk = new NodeSDK({ ...(serviceName ? { serviceName } : {}), metricReaders: [], logRecordProcessors: [] });
    if (!env.OTEL_LOG_LEVEL) {
      const warn = (message: string, ...args: unknown[]) => log.warn({ otel: args.map(String).join(' ') }, `opentelemetry: ${message}`);
      loadedApi.diag.setLogger({ error: warn, warn, info: () => {}, debug: () => {}, verbose: () => {} }, loadedApi.DiagLogLevel.WARN);
    }
    sdk.start();
    api = loadedApi;
    svcTracer = loadedApi.trace.getTracer('@svc/server');
    log.info({ endpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT }, 'traces are exported over OTLP');
    return true;
  })();
  return starting;
}

/**
 * Sends the spans ended so far (the server's drain calls it last, so a stopped server's final
 * requests reach the collector). Bounded by the exporter's own timeout (OTEL_EXPORTER_OTLP_TIMEOUT,
 * 10 s by default).
 */
export async function flushTraces(): Promise<void> {
  if (!api) return;
  const provider = api.trace.getTracerProvider();
  const delegate = provider instanceof api.ProxyTracerProvider ? provider.getDelegate() : provider;
  await (delegate as { forceFlush?: () => Promise<void> }).forceFlush?.();
}

/**
 * The pino mixin of log lines when traces are wanted: the active span's ids, so a line leads to
 * its trace (nothing until the SDK runs). A fresh object each time (pino merges the line's fields
 * into it).
 */
export function traceLogFields(): Record<string, string> {
  const span = api?.trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** Adds the active trace context (W3C `traceparent`, `tracestate`) to an outgoing call's headers; off, the headers as they are. */
export function withTraceContext(headers: Record<string, string>): Record<string, string> {
  if (api) api.propagation.inject(api.context.active(), headers);
  return headers;
}

/** Ends a span as failed, naming the error's stable code (or class) as `error.type`. */
export function endSpanFailed(span: Span, error: unknown): void {
  const code = (error as { code?: unknown })?.code;
  span.setAttribute('error.type', typeof code === 'string' ? code : ((error as Error)?.name ?? 'Error'));
  span.setStatus({ code: otel().SpanStatusCode.ERROR, ...(error instanceof Error ? { message: error.message } : {}) });
  span.end();
}

/**
 * A span around work that has already begun (`startedAt`, a performance.now() reading) and ends
 * when `work` settles: the PDF parse, whose worker job is a promise the pool hands back.
 */
export function traceSettled(name: string, startedAt: number, work: Promise<unknown>, attributes: Attributes): void {
  if (!svcTracer) return;
  const span = svcTracer.startSpan(name, { attributes, startTime: performance.timeOrigin + startedAt });
  work.then(
    () => span.end(),
    (error: unknown) => endSpanFailed(span, error),
  );
}
