import type { InferenceUsage } from '@svc/schemas';
import type { ModelRegistry, ResolvedModel } from '../models/index.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { ServiceError } from '../../service-error.ts';
import { EngineUnavailableError, type Capability, type EngineCallOptions } from '../../inference/provider.ts';
import type { UsageHook } from '../../inference/usage-hook.ts';
import { endModelCallSpan, traceModelCall } from '../../inference/model-call-trace.ts';

/**
 * Who is calling and how to stop: an HTTP request gives its own; a batch job makes one per item.
 */
export type InvocationContext = Pick<RequestContext, 'signal' | 'log' | 'requestId'> & { principal: { id: string; developerKeyId?: string } };

export interface InvokeDeps {
  models: ModelRegistry;
  usage: UsageHook;
}

/** What an operation's engine call gives back: the answer and what it used. */
export interface EngineAnswer<T> {
  value: T;
  usage: InferenceUsage;
}

/**
 * The models a call tries, in order: the one resolved, then its fallbacks that can serve the
 * same capability (an unknown or unfit fallback is skipped, never fatal: the configuration was
 * checked at start-up, and the first model is what the caller asked for).
 */
export function candidateModels(models: ModelRegistry, capability: Capability, first: ResolvedModel): ResolvedModel[] {
  const chain = [first];
  for (const id of first.model.fallbacks) {
    const model = models.model(id);
    if (!model || !model.capabilities.includes(capability) || chain.some((entry) => entry.model.id === id)) continue;
    chain.push({ model, provider: models.providerFor(model) });
  }
  return chain;
}

/** An engine failure that produced nothing, as the stable error the caller sees. */
export function engineFailure(error: EngineUnavailableError): ServiceError {
  return new ServiceError(error.code, error.message, {
    retryable: true,
    ...(error.retryAfterMs !== undefined ? { retryAfterSeconds: error.retryAfterMs / 1000 } : {}),
  });
}

/**
 * Runs one inference operation: resolves the model (the request's or the default), calls its
 * engine, falls back in order when an engine fails before producing anything, and reports the
 * usage (or the failure) to the usage hook. Handlers call this and shape the answer.
 */
export async function invokeModel<T>(
  deps: InvokeDeps,
  operation: string,
  capability: Capability,
  requested: string | undefined,
  request: InvocationContext,
  call: (resolved: ResolvedModel, options: EngineCallOptions) => Promise<EngineAnswer<T>>,
): Promise<{ value: T; usage: InferenceUsage; served: ResolvedModel }> {
  const started = performance.now();
  const answer = await callWithFallbacks(deps, operation, capability, requested, request, call, started);
  reportUsage(deps.usage, { operation, resolved: answer.served, usage: answer.usage, started, request, ok: true });
  return answer;
}

/**
 * What an engine call gets from its request. The logger is read only when an engine has something
 * to say (a request's child logger is made on first use), through a prototype getter. Not an
 * object literal with a `get log()`: V8 builds each such literal on a slow path whose objects kept
 * every request's graph alive through a young collection or two, which then copied and promoted
 * about 4 KiB per call (bench/chat-proxy's `MiB promoted`; 6 to 10 ms pauses under the chat proxy).
 */
class RequestCallOptions implements EngineCallOptions {
  readonly signal: AbortSignal;
  private readonly request: InvocationContext;
  constructor(request: InvocationContext) {
    this.request = request;
    this.signal = request.signal;
  }
  get log() {
    return this.request.log;
  }
}

/**
 * The engine call of `invokeModel` without the success report: for a stream, whose usage is
 * known only when it ends (the caller reports it then). Failures are reported here.
 */
export async function callWithFallbacks<T>(
  deps: InvokeDeps,
  operation: string,
  capability: Capability,
  requested: string | undefined,
  request: InvocationContext,
  call: (resolved: ResolvedModel, options: EngineCallOptions) => Promise<EngineAnswer<T>>,
  started = performance.now(),
): Promise<{ value: T; usage: InferenceUsage; served: ResolvedModel }> {
  const chain = candidateModels(deps.models, capability, deps.models.resolve(capability, requested));
  const options = new RequestCallOptions(request);
  let lastFailure: EngineUnavailableError | undefined;
  for (const resolved of chain) {
    try {
      const answer = await traceModelCall(request, operation, resolved, () => call(resolved, options));
      return { value: answer.value, usage: answer.usage, served: resolved };
    } catch (error) {
      if (error instanceof EngineUnavailableError && !request.signal.aborted) {
        request.log.warn(
          { model: resolved.model.id, engine: resolved.model.engine, code: error.code, err: error.message },
          'engine failed before answering; trying the next fallback',
        );
        lastFailure = error;
        continue;
      }
      const code = request.signal.aborted ? 'client_disconnected' : error instanceof ServiceError ? error.code : 'internal_error';
      reportUsage(deps.usage, { operation, resolved, usage: { prompt_tokens: 0, total_tokens: 0 }, started, request, ok: false, errorCode: code });
      throw error;
    }
  }
  reportUsage(deps.usage, {
    operation,
    resolved: chain.at(-1)!,
    usage: { prompt_tokens: 0, total_tokens: 0 },
    started,
    request,
    ok: false,
    errorCode: lastFailure!.code,
  });
  throw engineFailure(lastFailure!);
}

export function reportUsage(
  usage: UsageHook,
  call: { operation: string; resolved: ResolvedModel; usage: InferenceUsage; started: number; request: InvocationContext; ok: boolean; errorCode?: string },
): void {
  endModelCallSpan(call.request, call.usage, call.ok, call.errorCode);
  usage.report({
    operation: call.operation,
    engine: call.resolved.model.engine,
    model: call.resolved.model.id,
    usage: call.usage,
    latencyMs: performance.now() - call.started,
    principalId: call.request.principal.id,
    ...(call.request.principal.developerKeyId !== undefined ? { developerKeyId: call.request.principal.developerKeyId } : {}),
    requestId: call.request.requestId,
    ok: call.ok,
    ...(call.errorCode !== undefined ? { errorCode: call.errorCode } : {}),
  });
}

/** How an answer names who served it. */
export function servedBy(resolved: ResolvedModel) {
  return { engine: resolved.model.engine, model: resolved.model.id, method: resolved.model.method };
}
