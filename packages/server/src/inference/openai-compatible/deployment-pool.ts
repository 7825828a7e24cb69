import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceError } from '../../service-error.ts';
import { traceAttempt } from '../model-call-trace.ts';
import { EngineUnavailableError, type EngineCallOptions, type InferenceProvider, type ModelEntry } from '../provider.ts';
import { BACKOFF_CAP_MS, type RoutingSettings } from './deployment-config.ts';
import { type Admission, DeploymentHealth, type HealthSnapshot } from './deployment-health.ts';
import type { DeploymentMetrics, DeploymentSeries } from './deployment-metrics.ts';
import type { UpstreamModelSettings } from './upstream-config.ts';

/** One deployment of a pool: where its calls go and what this process knows of its health. */
interface PoolDeployment {
  upstream: string;
  upstreamModel: string;
  weight: number;
  maxInFlight: number | undefined;
  provider: InferenceProvider;
  /** The model entry as this deployment's engine gets it: its own upstream and model name. */
  entry: ModelEntry;
  health: DeploymentHealth;
  series: DeploymentSeries | undefined;
  /** Its latest failure, repeated to a caller while it cools down and nothing else can be tried. */
  lastFailure: EngineUnavailableError | undefined;
}

/** A deployment's health as the operator route shows it. */
export interface DeploymentReport extends HealthSnapshot {
  model: string;
  upstream: string;
  upstreamModel: string;
  weight: number;
  maxInFlight: number | undefined;
}

export interface DeploymentPool {
  /** The engine the model's calls go through: it picks a deployment per call and retries on its siblings. */
  readonly provider: InferenceProvider;
  report(now: number): DeploymentReport[];
}

type Attempt<T> = (deployment: PoolDeployment) => Promise<T>;

/**
 * The deployments of one model as one engine. Each call goes to a deployment picked by the
 * model's balancing (weighted random, or fewest calls in flight), skipping those cooling down
 * or at their in-flight maximum. A failure before the first byte (an EngineUnavailableError:
 * connection, timeout, 5xx, 429, 408, ...) is retried on a sibling not yet tried, after a
 * jittered backoff, while the call's retry window lasts; when none is left the last failure
 * goes up, and the model's fallbacks are tried by the caller (invoke-model). Nothing is retried
 * once an answer opened: a stream's later failure reaches the client as it did.
 */
export function createDeploymentPool(
  model: UpstreamModelSettings,
  entry: ModelEntry,
  providers: ReadonlyMap<string, InferenceProvider>,
  routing: RoutingSettings,
  metrics: DeploymentMetrics | undefined,
): DeploymentPool {
  const deployments: PoolDeployment[] = model.deployments.map((settings) => {
    const health = new DeploymentHealth(routing, settings.maxInFlight);
    return {
      ...settings,
      provider: providers.get(settings.upstream)!,
      entry: { ...entry, engine: settings.upstream, engineModel: settings.upstreamModel },
      health,
      series: metrics?.series({ model: model.id, upstream: settings.upstream, upstream_model: settings.upstreamModel }, () => health.snapshot(Date.now())),
      lastFailure: undefined,
    };
  });
  const leastInFlight = model.balancing === 'least_in_flight';

  /** A deployment not in `tried` (a bit per deployment) that may take a call now, by the model's balancing. */
  function pick(tried: number, now: number): { deployment: PoolDeployment; admission: 'call' | 'probe' } | undefined {
    let total = 0;
    let fewest = Number.POSITIVE_INFINITY;
    const open: Array<{ deployment: PoolDeployment; admission: 'call' | 'probe' }> = [];
    deployments.forEach((deployment, index) => {
      if (tried & (1 << index)) return;
      const admission: Admission = deployment.health.admit(now);
      if (admission === undefined) return;
      open.push({ deployment, admission });
      fewest = Math.min(fewest, deployment.health.inFlight);
    });
    const candidates = leastInFlight ? open.filter((candidate) => candidate.deployment.health.inFlight === fewest) : open;
    for (const candidate of candidates) total += candidate.deployment.weight;
    let draw = Math.random() * total;
    for (const candidate of candidates) {
      draw -= candidate.deployment.weight;
      if (draw < 0) return candidate;
    }
    return candidates.at(-1);
  }

  /**
   * Nothing could be tried: every deployment cools down or is full. A cooling deployment's own
   * failure is repeated (same code, so a caller sees what it saw before the cooldown), with the
   * time until it takes calls again; when all are only full, `upstream_unavailable`.
   */
  function noneAvailable(now: number): EngineUnavailableError {
    const soonest = deployments.reduce((best, deployment) => (deployment.health.availableAt(now) < best.health.availableAt(now) ? deployment : best));
    const wait = soonest.health.availableAt(now) - now;
    const cooling = deployments.filter((deployment) => deployment.lastFailure && deployment.health.availableAt(now) > now);
    if (cooling.length === deployments.length) {
      const failure = soonest.lastFailure!;
      const message = `${failure.message} Model "${model.id}" is cooling down after failures: no call goes upstream for ${Math.ceil(wait / 1000)} s.`;
      return new EngineUnavailableError(failure.code, message, failure.status, wait);
    }
    return new EngineUnavailableError(
      'upstream_unavailable',
      `No deployment of model "${model.id}" can take a call now: each is cooling down after failures or at its in-flight maximum.`,
      undefined,
      wait > 0 ? wait : undefined,
    );
  }

  async function run<T>(
    options: EngineCallOptions,
    attempt: Attempt<T>,
    keepsSlot?: (value: T, settle: (failure?: unknown) => void, signal: AbortSignal) => T,
  ): Promise<T> {
    const started = performance.now();
    let tried = 0;
    let lastFailure: EngineUnavailableError | undefined;
    for (let retry = 0; ; retry++) {
      let chosen = pick(tried, Date.now());
      if (!chosen) break;
      if (retry > 0) {
        // Only when a sibling is left to try: a model with none goes on to its fallbacks at once.
        const delay = Math.random() * Math.min(BACKOFF_CAP_MS, routing.backoffBaseMs * 2 ** (retry - 1));
        if (performance.now() + delay - started > routing.retryWindowMs) break;
        if (delay >= 1) {
          await sleep(delay, undefined, { signal: options.signal });
          // The wait may have changed who can take the call.
          chosen = pick(tried, Date.now());
          if (!chosen) break;
        }
      }
      const { deployment, admission } = chosen;
      tried |= 1 << deployments.indexOf(deployment);
      deployment.health.start(admission);
      const callStarted = performance.now();
      let value: T;
      try {
        // A span per attempt, naming the deployment tried and how it ended (docs/observability.md).
        value = await traceAttempt({ engine: deployment.upstream, engineModel: deployment.upstreamModel, modelId: model.id }, () => attempt(deployment));
      } catch (error) {
        const seconds = (performance.now() - callStarted) / 1000;
        if (options.signal.aborted) {
          deployment.health.released(admission);
          throw error;
        }
        if (error instanceof ServiceError && error.code === 'upstream_rejected_request') {
          // The request itself is wrong: the deployment is up, and a sibling would refuse it too.
          recordOk(deployment, admission, seconds);
          throw error;
        }
        recordFailure(deployment, admission, seconds, error);
        if (!(error instanceof EngineUnavailableError)) throw error;
        options.log.warn(
          { model: model.id, upstream: deployment.upstream, code: error.code, err: error.message },
          'deployment failed before answering; trying a sibling, if one is left',
        );
        lastFailure = error;
        continue;
      }
      const seconds = (performance.now() - callStarted) / 1000;
      if (!keepsSlot) {
        recordOk(deployment, admission, seconds);
        return value;
      }
      // A stream holds its slot until it ends; its outcome is known then.
      return keepsSlot(
        value,
        (failure) => {
          if (options.signal.aborted) deployment.health.released(admission);
          else if (failure === undefined) recordOk(deployment, admission, seconds);
          else recordFailure(deployment, admission, seconds, failure);
        },
        options.signal,
      );
    }
    throw lastFailure ?? noneAvailable(Date.now());
  }

  function recordOk(deployment: PoolDeployment, admission: 'call' | 'probe', seconds: number): void {
    deployment.health.succeeded(admission, seconds * 1000);
    deployment.series?.ok(seconds);
  }

  function recordFailure(deployment: PoolDeployment, admission: 'call' | 'probe', seconds: number, error: unknown): void {
    const unavailable = error instanceof EngineUnavailableError ? error : undefined;
    if (unavailable) deployment.lastFailure = unavailable;
    const cooldown = deployment.health.failed(
      admission,
      seconds * 1000,
      { rateLimited: unavailable?.status === 429, retryAfterMs: unavailable?.retryAfterMs },
      Date.now(),
    );
    deployment.series?.failed(seconds);
    if (cooldown) deployment.series?.cooldown(cooldown.reason);
  }

  const first = deployments[0]!;
  const provider: InferenceProvider = {
    id: first.upstream,
    kind: 'openai-compatible',
    label: first.provider.label,
    description: first.provider.description,
    available: () => true,
    chat: (request, options) => run(options, (deployment) => deployment.provider.chat!({ ...request, model: deployment.entry }, options)),
    chatStream: (request, options) =>
      run(options, (deployment) => deployment.provider.chatStream!({ ...request, model: deployment.entry }, options), settledAtEnd),
    embed: (request, options) => run(options, (deployment) => deployment.provider.embed!({ ...request, model: deployment.entry }, options)),
    rerank: (request, options) => run(options, (deployment) => deployment.provider.rerank!({ ...request, model: deployment.entry }, options)),
    responses: (request, options) => run(options, (deployment) => deployment.provider.responses!({ ...request, model: deployment.entry }, options)),
    responsesStream: (request, options) =>
      run(options, (deployment) => deployment.provider.responsesStream!({ ...request, model: deployment.entry }, options), settledAtEnd),
  };

  return {
    provider,
    report: (now) =>
      deployments.map((deployment) => ({
        model: model.id,
        upstream: deployment.upstream,
        upstreamModel: deployment.upstreamModel,
        weight: deployment.weight,
        maxInFlight: deployment.maxInFlight,
        ...deployment.health.snapshot(now),
      })),
  };
}

/**
 * A stream that calls `settle` once when it ends: with nothing when it ran to its end or the
 * reader stopped, with the failure when it broke, and at once when the client leaves (a reader
 * that never started would otherwise hold the deployment's slot). The chunks pass through untouched.
 */
function settledAtEnd<T>(stream: AsyncIterable<T>, settle: (failure?: unknown) => void, signal: AbortSignal): AsyncIterableIterator<T> {
  const iterator = stream[Symbol.asyncIterator]();
  let open = true;
  const finish = (failure?: unknown) => {
    if (!open) return;
    open = false;
    signal.removeEventListener('abort', onAbort);
    settle(failure);
  };
  const onAbort = () => finish();
  signal.addEventListener('abort', onAbort, { once: true });
  const onResult = (result: IteratorResult<T>) => {
    if (result.done) finish();
    return result;
  };
  const onFailure = (error: unknown) => {
    finish(error);
    throw error;
  };
  return {
    next: () => iterator.next().then(onResult, onFailure),
    return(value?: unknown) {
      finish();
      return iterator.return ? iterator.return(value) : Promise.resolve({ done: true, value: value as T });
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
