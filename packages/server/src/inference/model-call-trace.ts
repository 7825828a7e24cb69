import type { Context, Span } from '@opentelemetry/api';
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
 * One model call as its attempts see it (carried in the OpenTelemetry context): a deployment
 * pool tries several deployments, and each attempt is a span of its own (traceAttempt).
 */
interface TracedCall {
  operation: string;
  /** The context the call began in: each attempt's span is a child of it, siblings of each other. */
  parent: Context;
  /** The current attempt's span, and whether it has ended (a failed attempt ends at once). */
  span: Span;
  ended: boolean;
  attempts: number;
  /** The model the answer says it came from, when the engine reported one (`gen_ai.response.model`). */
  responseModel: string | undefined;
}

let callKey: symbol | undefined;
const tracedCall = (): TracedCall | undefined => (callKey ? (otel().context.active().getValue(callKey) as TracedCall | undefined) : undefined);

/** The GenAI attributes of a call to `engineModel` on `engine` (OpenTelemetry's GenAI conventions). */
function genAiAttributes(operation: string, provider: Pick<InferenceProvider, 'kind'>, modelId: string, engine: string, engineModel: string) {
  // The protocol spoken names the provider: an OpenAI-compatible upstream speaks OpenAI's API.
  const providerName = provider.kind === 'openai-compatible' ? 'openai' : 'svc';
  return {
    'gen_ai.operation.name': operation,
    'gen_ai.request.model': engineModel,
    'gen_ai.provider.name': providerName,
    'gen_ai.system': providerName,
    'svc.model': modelId,
    'svc.engine': engine,
  };
}

/**
 * Runs one engine call inside a GenAI client span (`{operation} {model}`, `gen_ai.operation.name`,
 * `gen_ai.request.model`, `gen_ai.provider.name`), so the upstream request made inside it carries
 * its `traceparent`. A deployment pool's attempts (traceAttempt) each get a span naming the
 * deployment tried, the first taking over this one. A call that fails ends its span at once; one
 * that succeeds leaves the answering attempt's span open for `endModelCallSpan`, which adds the
 * usage. Off, the call runs as it is.
 */
export function traceModelCall<T>(caller: object, operation: string, called: CalledModel, call: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return call();
  const { model, provider } = called;
  const { context, SpanKind, trace, createContextKey } = otel();
  callKey ??= createContextKey('svc.model-call');
  const parent = context.active();
  const span = tracer().startSpan(`${operation} ${model.engineModel}`, {
    kind: SpanKind.CLIENT,
    attributes: genAiAttributes(operation, provider, model.id, model.engine, model.engineModel),
  });
  const traced: TracedCall = { operation, parent, span, ended: false, attempts: 0, responseModel: undefined };
  openCalls.get(caller)?.end();
  return context.with(trace.setSpan(parent, span).setValue(callKey, traced), call).then(
    (value) => {
      // Not a pool (the built-in engine): the model asked for is the one that answered.
      if (traced.attempts === 0 && traced.responseModel === undefined) traced.span.setAttribute('gen_ai.response.model', model.engineModel);
      openCalls.set(caller, traced.span);
      return value;
    },
    (error: unknown) => {
      if (!traced.ended) endSpanFailed(traced.span, error);
      throw error;
    },
  );
}

/**
 * One attempt of a deployment pool: a span naming the deployment (`svc.engine` its upstream,
 * `gen_ai.request.model` its model name), ended failed with its error when the attempt fails, so
 * a call that failed on one deployment and was served by another shows both. The first attempt
 * takes over the call's span; later ones are its siblings. Outside a traced call, it just runs.
 */
export function traceAttempt<T>(deployment: { engine: string; engineModel: string; modelId: string }, attempt: () => Promise<T>): Promise<T> {
  const traced = tracingOn() ? tracedCall() : undefined;
  if (!traced) return attempt();
  const { context, SpanKind, trace } = otel();
  traced.attempts++;
  traced.responseModel = undefined;
  const attributes = genAiAttributes(traced.operation, { kind: 'openai-compatible' }, deployment.modelId, deployment.engine, deployment.engineModel);
  const name = `${traced.operation} ${deployment.engineModel}`;
  if (traced.attempts === 1) {
    traced.span.updateName(name);
    traced.span.setAttributes(attributes);
  } else {
    traced.span = tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes }, traced.parent);
    traced.ended = false;
  }
  const span = traced.span;
  span.setAttribute('svc.attempt', traced.attempts);
  return context.with(trace.setSpan(traced.parent, span).setValue(callKey!, traced), attempt).then(
    (value) => {
      if (traced.responseModel === undefined) span.setAttribute('gen_ai.response.model', deployment.engineModel);
      return value;
    },
    (error: unknown) => {
      endSpanFailed(span, error);
      traced.ended = true;
      throw error;
    },
  );
}

/** The model name the engine's answer gives (`gen_ai.response.model`), on the attempt's span. */
export function recordResponseModel(name: unknown): void {
  if (typeof name !== 'string' || !tracingOn()) return;
  const traced = tracedCall();
  if (!traced) return;
  traced.responseModel = name;
  traced.span.setAttribute('gen_ai.response.model', name);
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
