import type { Span } from '@opentelemetry/api';
import type { InferenceUsage } from '@svc/schemas';
import { endSpanFailed, otel, tracer, tracingOn } from '../observability/tracing.ts';
import type { InferenceProvider, ModelEntry } from './provider.ts';

/** The model a call is made to, as the model registry resolves it. */
interface CalledModel {
  model: Pick<ModelEntry, 'id' | 'engine' | 'engineModel'>;
  provider: Pick<InferenceProvider, 'kind'>;
}

/**
 * The open span of each caller's engine call, until its usage is reported: a stream's usage is
 * known only when the stream ends, after the call itself returned. Keyed by the caller's request
 * (an HTTP request, or a job's item), so a span dies with its request if never reported.
 */
const openCalls = new WeakMap<object, Span>();

/**
 * Runs one engine call inside a GenAI client span (OpenTelemetry's GenAI conventions:
 * `{operation} {model}`, `gen_ai.operation.name`, `gen_ai.request.model`, `gen_ai.provider.name`),
 * so the upstream request made inside it carries its `traceparent`. A call that fails ends its
 * span at once; one that succeeds leaves it open for `endModelCallSpan`, which adds the usage.
 * Off, the call runs as it is.
 */
export function traceModelCall<T>(caller: object, operation: string, called: CalledModel, call: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return call();
  const { model, provider } = called;
  const { context, SpanKind, trace } = otel();
  // The protocol spoken names the provider: an OpenAI-compatible upstream speaks OpenAI's API.
  const providerName = provider.kind === 'openai-compatible' ? 'openai' : 'svc';
  const span = tracer().startSpan(`${operation} ${model.engineModel}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': operation,
      'gen_ai.request.model': model.engineModel,
      'gen_ai.provider.name': providerName,
      'gen_ai.system': providerName,
      'svc.model': model.id,
      'svc.engine': model.engine,
    },
  });
  openCalls.get(caller)?.end();
  return context.with(trace.setSpan(context.active(), span), call).then(
    (value) => {
      openCalls.set(caller, span);
      return value;
    },
    (error: unknown) => {
      endSpanFailed(span, error);
      throw error;
    },
  );
}

/** Ends the caller's open engine-call span with what the call used (`gen_ai.usage.*`), or as failed. */
export function endModelCallSpan(caller: object, usage: InferenceUsage, ok: boolean, errorCode: string | undefined): void {
  if (!tracingOn()) return;
  const span = openCalls.get(caller);
  if (!span) return;
  openCalls.delete(caller);
  span.setAttribute('gen_ai.usage.input_tokens', usage.prompt_tokens);
  if (usage.completion_tokens !== undefined) span.setAttribute('gen_ai.usage.output_tokens', usage.completion_tokens);
  if (ok) span.end();
  else endSpanFailed(span, { code: errorCode ?? 'internal_error' });
}
