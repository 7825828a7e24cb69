import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CooldownReason, DeploymentState, HealthSnapshot } from './deployment-health.ts';

const STATES: readonly DeploymentState[] = ['healthy', 'cooling_down', 'probe_due', 'probing'];
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** One deployment's series, made once when its pool is built so a call does no label lookup. */
export interface DeploymentSeries {
  ok(seconds: number): void;
  failed(seconds: number): void;
  cooldown(reason: CooldownReason): void;
}

export interface DeploymentMetrics {
  series(labels: DeploymentLabels, snapshot: () => HealthSnapshot): DeploymentSeries;
}

/** The labels of a deployment: the public model, the upstream's id and its model name. All come from the configuration, so their number is bounded by it, never by callers. */
export interface DeploymentLabels {
  model: string;
  upstream: string;
  upstream_model: string;
}

/**
 * Per-deployment series in the server's Prometheus registry: calls by outcome, time to the
 * answer (a stream's first event), cooldowns begun by reason, and the state and calls in flight
 * read at scrape time from each deployment's health.
 */
export function createDeploymentMetrics(registry: Registry): DeploymentMetrics {
  const labelNames = ['model', 'upstream', 'upstream_model'] as const;
  const calls = new Counter({
    name: 'svc_upstream_deployment_calls_total',
    help: 'Calls to an upstream deployment by outcome (error: failed before its answer, or its stream broke)',
    labelNames: [...labelNames, 'outcome'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'svc_upstream_deployment_latency_seconds',
    help: "Time from a call's start to its deployment's answer (a stream's first event), every outcome",
    labelNames,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const cooldowns = new Counter({
    name: 'svc_upstream_deployment_cooldowns_total',
    help: 'Cooldowns begun by a deployment, by reason (failures, rate_limited, probe_failed)',
    labelNames: [...labelNames, 'reason'],
    registers: [registry],
  });
  const watched: Array<{ labels: DeploymentLabels; snapshot: () => HealthSnapshot }> = [];
  new Gauge({
    name: 'svc_upstream_deployment_state',
    help: "1 for a deployment's current state in this process (healthy, cooling_down, probe_due, probing), 0 for the others",
    labelNames: [...labelNames, 'state'],
    registers: [registry],
    collect() {
      for (const { labels, snapshot } of watched) {
        const current = snapshot().state;
        for (const state of STATES) this.set({ ...labels, state }, state === current ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'svc_upstream_deployment_in_flight',
    help: 'Calls in flight to a deployment from this process',
    labelNames,
    registers: [registry],
    collect() {
      for (const { labels, snapshot } of watched) this.set({ ...labels }, snapshot().inFlight);
    },
  });

  return {
    series(labels, snapshot) {
      watched.push({ labels, snapshot });
      const ok = calls.labels({ ...labels, outcome: 'ok' });
      const error = calls.labels({ ...labels, outcome: 'error' });
      const time = latency.labels({ ...labels });
      const byReason = {
        failures: cooldowns.labels({ ...labels, reason: 'failures' }),
        rate_limited: cooldowns.labels({ ...labels, reason: 'rate_limited' }),
        probe_failed: cooldowns.labels({ ...labels, reason: 'probe_failed' }),
      };
      // Zero series exist from the start, so a rate over them is defined before the first event.
      for (const counter of Object.values(byReason)) counter.inc(0);
      error.inc(0);
      ok.inc(0);
      return {
        ok(seconds) {
          ok.inc();
          time.observe(seconds);
        },
        failed(seconds) {
          error.inc();
          time.observe(seconds);
        },
        cooldown(reason) {
          byReason[reason].inc();
        },
      };
    },
  };
}
