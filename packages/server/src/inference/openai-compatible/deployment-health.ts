import type { RoutingSettings } from './deployment-config.ts';

/** How many of a deployment's latest calls its recent error rate and latency are read from. */
export const RECENT_CALLS = 100;

/** `probe_due`: the cooldown ended and the next call picked here is its probe; `probing`: that probe is in flight. */
export type DeploymentState = 'healthy' | 'cooling_down' | 'probe_due' | 'probing';
/** Why a cooldown began: failures in a row, a 429 (or a `Retry-After`), or the probe after a cooldown failed. */
export type CooldownReason = 'failures' | 'rate_limited' | 'probe_failed';
/** Whether a call may go to a deployment now: as an ordinary call, as the one probe after a cooldown, or not at all. */
export type Admission = 'call' | 'probe' | undefined;

export interface HealthSnapshot {
  state: DeploymentState;
  inFlight: number;
  consecutiveFailures: number;
  /** Cooldowns in a row without a success between (the next lasts twice the last). */
  cooldownsInRow: number;
  /** When the current or latest cooldown ends (epoch ms); undefined once a success restored the deployment. */
  cooldownUntil: number | undefined;
  recentCalls: number;
  recentErrorRate: number;
  recentLatencyP50Ms: number | undefined;
  recentLatencyP95Ms: number | undefined;
  calls: number;
  failures: number;
}

/**
 * One deployment's health in this process: calls in flight, failures in a row, and the cooldown
 * they lead to. Advice, not shared state: each replica learns an upstream's health from its own
 * calls (docs/inference.md, "Deployments").
 *
 * While a deployment cools down it is not admitted; when the cooldown ends, one call is let
 * through as its probe and others still avoid it; the probe's success restores it, its failure
 * starts a cooldown twice as long. Calls that were already in flight when a cooldown began end
 * as they end: only the probe decides.
 */
export class DeploymentHealth {
  inFlight = 0;
  private consecutiveFailures = 0;
  private cooldownsInRow = 0;
  /** 0: not cooling down (nor waiting for a probe). */
  private cooldownUntil = 0;
  private probing = false;
  private calls = 0;
  private failures = 0;
  /** The latest calls' outcomes, a ring: latency in ms, and 1 for a failure. */
  private readonly recentLatency = new Float64Array(RECENT_CALLS);
  private readonly recentFailed = new Uint8Array(RECENT_CALLS);
  private recentNext = 0;
  private recentCount = 0;
  private readonly routing: RoutingSettings;
  private readonly maxInFlight: number;

  constructor(routing: RoutingSettings, maxInFlight: number | undefined) {
    this.routing = routing;
    this.maxInFlight = maxInFlight ?? Number.POSITIVE_INFINITY;
  }

  admit(now: number): Admission {
    if (this.inFlight >= this.maxInFlight) return undefined;
    if (this.cooldownUntil === 0) return 'call';
    if (this.cooldownUntil > now || this.probing) return undefined;
    return 'probe';
  }

  /** When this deployment takes calls again (epoch ms), for a caller told that none could be tried. */
  availableAt(now: number): number {
    return Math.max(this.cooldownUntil, now);
  }

  start(admission: 'call' | 'probe'): void {
    this.inFlight++;
    if (admission === 'probe') this.probing = true;
  }

  /** The deployment answered (a refusal of the request itself counts: the deployment is up). */
  succeeded(admission: 'call' | 'probe', latencyMs: number): void {
    this.end(admission, latencyMs, false);
    if (admission === 'probe' || this.cooldownUntil === 0) {
      this.consecutiveFailures = 0;
      this.cooldownsInRow = 0;
      this.cooldownUntil = 0;
    }
  }

  /**
   * The deployment failed. A 429, or any failure naming a wait (`retryAfterMs`), starts a
   * cooldown at once, as long as the wait when there is one; otherwise `failuresToCooldown` in a
   * row do. Returns the cooldown begun, if one did.
   */
  failed(
    admission: 'call' | 'probe',
    latencyMs: number,
    failure: { rateLimited: boolean; retryAfterMs: number | undefined },
    now: number,
  ): { reason: CooldownReason; until: number } | undefined {
    this.end(admission, latencyMs, true);
    if (admission === 'call' && this.cooldownUntil !== 0) return undefined;
    this.consecutiveFailures++;
    const reason: CooldownReason | undefined =
      admission === 'probe'
        ? 'probe_failed'
        : failure.rateLimited || failure.retryAfterMs !== undefined
          ? 'rate_limited'
          : this.consecutiveFailures >= this.routing.failuresToCooldown
            ? 'failures'
            : undefined;
    if (reason === undefined) return undefined;
    const grown = Math.min(this.routing.cooldownMaxMs, this.routing.cooldownMs * 2 ** this.cooldownsInRow);
    this.cooldownsInRow++;
    this.cooldownUntil = now + (failure.retryAfterMs ?? grown);
    return { reason, until: this.cooldownUntil };
  }

  /** The call ended with no word on the deployment's health (the client left): only its slot is given back. */
  released(admission: 'call' | 'probe'): void {
    this.inFlight--;
    if (admission === 'probe') this.probing = false;
  }

  private end(admission: 'call' | 'probe', latencyMs: number, failed: boolean): void {
    this.released(admission);
    this.calls++;
    if (failed) this.failures++;
    this.recentLatency[this.recentNext] = latencyMs;
    this.recentFailed[this.recentNext] = failed ? 1 : 0;
    this.recentNext = (this.recentNext + 1) % RECENT_CALLS;
    this.recentCount = Math.min(RECENT_CALLS, this.recentCount + 1);
  }

  snapshot(now: number): HealthSnapshot {
    const latencies = Array.from(this.recentLatency.subarray(0, this.recentCount)).sort((a, b) => a - b);
    const failed = this.recentFailed.subarray(0, this.recentCount).reduce((sum, value) => sum + value, 0);
    const quantile = (q: number) => (latencies.length === 0 ? undefined : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]);
    return {
      state: this.cooldownUntil === 0 ? 'healthy' : this.probing ? 'probing' : this.cooldownUntil > now ? 'cooling_down' : 'probe_due',
      inFlight: this.inFlight,
      consecutiveFailures: this.consecutiveFailures,
      cooldownsInRow: this.cooldownsInRow,
      cooldownUntil: this.cooldownUntil === 0 ? undefined : this.cooldownUntil,
      recentCalls: this.recentCount,
      recentErrorRate: this.recentCount === 0 ? 0 : failed / this.recentCount,
      recentLatencyP50Ms: quantile(0.5),
      recentLatencyP95Ms: quantile(0.95),
      calls: this.calls,
      failures: this.failures,
    };
  }
}
