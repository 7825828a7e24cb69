import { z } from 'zod';
import { defineContract, defineRoute } from '../route.ts';

export const DeploymentHealthInfo = z
  .object({
    model: z.string().describe('The public model id the deployment serves.'),
    upstream: z.string().describe("The upstream's id in the configuration (never its URL or key)."),
    upstream_model: z.string().describe('What the upstream calls the model.'),
    weight: z.number().int().positive().describe("The deployment's share under weighted balancing, against the sum of the model's weights."),
    max_in_flight: z.number().int().positive().nullable().describe('Calls in flight past which the deployment is skipped; null: no limit.'),
    state: z
      .enum(['healthy', 'cooling_down', 'probe_due', 'probing'])
      .describe(
        '`cooling_down`: avoided until `cooldown_until`; `probe_due`: the cooldown ended and the next call picked here is its one probe; `probing`: that probe is in flight (success restores `healthy`, failure starts a cooldown twice as long).',
      ),
    in_flight: z.number().int().nonnegative(),
    consecutive_failures: z.number().int().nonnegative(),
    cooldowns_in_row: z.number().int().nonnegative().describe('Cooldowns begun without a success between; each lasts twice the one before, up to the cap.'),
    cooldown_until: z.string().datetime().nullable().describe('When the current or latest cooldown ends; null once a success restored the deployment.'),
    recent: z
      .object({
        calls: z.number().int().nonnegative().describe('How many of the latest calls (up to 100) the figures below are read from.'),
        error_rate: z.number().min(0).max(1),
        latency_ms_p50: z.number().nonnegative().nullable(),
        latency_ms_p95: z.number().nonnegative().nullable(),
      })
      .describe("The deployment's latest calls: time to its answer (a stream's first event), failures counted."),
    calls: z.number().int().nonnegative().describe('Calls since this process started.'),
    failures: z.number().int().nonnegative(),
  })
  .meta({ id: 'DeploymentHealthInfo' });
export type DeploymentHealthInfo = z.infer<typeof DeploymentHealthInfo>;

export const UpstreamsHealthResponse = z
  .object({
    object: z.literal('list'),
    scope: z.literal('process').describe("Health is this server process's own view, learnt from its own calls: replicas may differ."),
    data: z.array(DeploymentHealthInfo),
  })
  .meta({ id: 'UpstreamsHealthResponse' });
export type UpstreamsHealthResponse = z.infer<typeof UpstreamsHealthResponse>;

export const upstreamsContract = defineContract({
  health: defineRoute({
    method: 'GET',
    path: '/v1/upstreams/health',
    surface: 'base',
    tags: ['models'],
    auth: { kind: 'bearer', principals: ['operator'] },
    summary: 'Health of every upstream model deployment, as this process sees it',
    description:
      "One item per deployment of every upstream model: its state (healthy, cooling down after failures or a 429, waiting for or running its one probe), calls in flight, its latest calls' error rate and latency, and when its cooldown ends. " +
      'Health is advice kept per process, not shared state: each replica learns it from its own calls, so two replicas may answer differently (docs/inference.md, "Deployments").',
    responses: { 200: UpstreamsHealthResponse },
  }),
});
