import { z } from 'zod';

/** How a model's calls are spread over its deployments: at random by weight, or to the one with the fewest calls in flight. */
export const balancingStrategies = ['weighted', 'least_in_flight'] as const;
export type BalancingStrategy = (typeof balancingStrategies)[number];

/** One deployment of a model: an upstream (its base URL, key and deadlines), what that upstream calls the model, and its share. */
export interface DeploymentSettings {
  upstream: string;
  upstreamModel: string;
  /** Its share of the traffic under `weighted`, against the sum of the model's weights. */
  weight: number;
  /** Calls in flight at once past which it is skipped; none: no limit. */
  maxInFlight: number | undefined;
}

/** A deployment as the models file writes it (`models[i].deployments[j]`). */
export const ModelsFileDeployment = z.strictObject({
  upstream: z.string().min(1),
  weight: z.number().int().min(1).max(1000).default(1),
  upstream_model: z.string().min(1).max(256).optional(),
  max_in_flight: z.number().int().min(1).max(100_000).optional(),
});

/** When a deployment is avoided, and how a failed call moves on to a sibling. Per process: see docs/inference.md, "Deployments". */
export interface RoutingSettings {
  /** Failures in a row that put a deployment into cooldown (a 429 does at once). */
  failuresToCooldown: number;
  /** The first cooldown; each one that follows without a success between doubles it, up to `cooldownMaxMs`. */
  cooldownMs: number;
  cooldownMaxMs: number;
  /** No new attempt starts this long after a call began (the call's deadline for retries). */
  retryWindowMs: number;
  /** The backoff before the n-th retry is drawn from [0, base x 2^(n-1)], capped at 2 s (full jitter). */
  backoffBaseMs: number;
}

export const BACKOFF_CAP_MS = 2_000;

export function routingFrom(env: {
  SVC_UPSTREAM_COOLDOWN_FAILURES: number;
  SVC_UPSTREAM_COOLDOWN_MS: number;
  SVC_UPSTREAM_COOLDOWN_MAX_MS: number;
  SVC_UPSTREAM_RETRY_WINDOW_MS: number;
  SVC_UPSTREAM_RETRY_BACKOFF_MS: number;
}): RoutingSettings {
  return {
    failuresToCooldown: env.SVC_UPSTREAM_COOLDOWN_FAILURES,
    cooldownMs: env.SVC_UPSTREAM_COOLDOWN_MS,
    // A cap below the first cooldown would shorten it: the cap is at least the first.
    cooldownMaxMs: Math.max(env.SVC_UPSTREAM_COOLDOWN_MS, env.SVC_UPSTREAM_COOLDOWN_MAX_MS),
    retryWindowMs: env.SVC_UPSTREAM_RETRY_WINDOW_MS,
    backoffBaseMs: env.SVC_UPSTREAM_RETRY_BACKOFF_MS,
  };
}
