import { upstreamsContract, type DeploymentHealthInfo } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import type { InferenceProvider } from '../../inference/provider.ts';
import { createDeploymentMetrics } from '../../inference/openai-compatible/deployment-metrics.ts';
import { createDeploymentPool, type DeploymentPool, type DeploymentReport } from '../../inference/openai-compatible/deployment-pool.ts';
import { upstreamModelEntry } from '../../inference/openai-compatible/openai-compatible-provider.ts';

/**
 * Registers every upstream model with a pool over its deployments (one, from `SVC_UPSTREAM_*`
 * or a model's `upstream`; several from its `deployments`), whose series go to `/v1/metrics`.
 * Returns the pools, for the operator's health route.
 */
export function registerUpstreamModels(
  deps: Pick<ServerDeps, 'config' | 'metrics' | 'models'>,
  providers: ReadonlyMap<string, InferenceProvider>,
): DeploymentPool[] {
  const { models, routing } = deps.config.inference;
  const metrics = models.length > 0 ? createDeploymentMetrics(deps.metrics.registry) : undefined;
  return models.map((model) => {
    const entry = upstreamModelEntry(model);
    const pool = createDeploymentPool(model, entry, providers, routing, metrics);
    deps.models.registerModel(entry, pool.provider);
    return pool;
  });
}

const rounded = (value: number | undefined) => (value === undefined ? null : Math.round(value * 1000) / 1000);

function asInfo(report: DeploymentReport): DeploymentHealthInfo {
  return {
    model: report.model,
    upstream: report.upstream,
    upstream_model: report.upstreamModel,
    weight: report.weight,
    max_in_flight: report.maxInFlight ?? null,
    state: report.state,
    in_flight: report.inFlight,
    consecutive_failures: report.consecutiveFailures,
    cooldowns_in_row: report.cooldownsInRow,
    cooldown_until: report.cooldownUntil === undefined ? null : new Date(report.cooldownUntil).toISOString(),
    recent: {
      calls: report.recentCalls,
      error_rate: Math.round(report.recentErrorRate * 10_000) / 10_000,
      latency_ms_p50: rounded(report.recentLatencyP50Ms),
      latency_ms_p95: rounded(report.recentLatencyP95Ms),
    },
    calls: report.calls,
    failures: report.failures,
  };
}

/** `GET /v1/upstreams/health`: every deployment of every upstream model, as this process sees it. */
export function createUpstreamsHandlers(pools: readonly DeploymentPool[]) {
  return defineHandlers(upstreamsContract, {
    async health() {
      const now = Date.now();
      return { status: 200, body: { object: 'list', scope: 'process', data: pools.flatMap((pool) => pool.report(now).map(asInfo)) } };
    },
  });
}
