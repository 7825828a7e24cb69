import { z } from 'zod';

export const DatabaseHealth = z.object({
  status: z.enum(['ok', 'unreachable']),
  kind: z.enum(['embedded', 'postgres']),
  latency_ms: z.number().nonnegative().describe('Round trip of the check, in ms (0 when unreachable)'),
  age_ms: z
    .number()
    .int()
    .nonnegative()
    .describe(
      'How long ago the check was made, in ms: /healthz answers from a check at most about a second old and never waits on the database (0 on /readyz, which checks anew)',
    ),
});

/**
 * Readiness: `ready` (200) while the server takes new work; 503 `draining` from the moment a
 * shutdown begins, or `unavailable` when the database cannot be reached.
 */
export const ReadyResponse = z
  .object({
    status: z.enum(['ready', 'draining', 'unavailable']),
    service: z.literal('svc'),
    database: DatabaseHealth.optional().describe('Absent while draining: the database is not asked'),
  })
  .meta({ id: 'ReadyResponse' });
export type ReadyResponse = z.infer<typeof ReadyResponse>;

/**
 * Liveness plus database reachability; 503 with the same body when the latest check found the
 * database unreachable. The check is at most about a second old (`database.age_ms`), so a
 * liveness probe measures the process, never the database's queue.
 */
export const HealthResponse = z
  .object({
    status: z.enum(['ok', 'degraded']),
    service: z.literal('svc'),
    version: z.string(),
    uptime_seconds: z.number().nonnegative(),
    database: DatabaseHealth,
  })
  .meta({ id: 'HealthResponse' });
export type HealthResponse = z.infer<typeof HealthResponse>;

export const ApiHealthResponse = z
  .object({ status: z.enum(['ok', 'degraded']), surface: z.literal('api'), version: z.string(), database: DatabaseHealth })
  .meta({ id: 'ApiHealthResponse' });

export const ServiceRoot = z
  .object({
    name: z.literal('svc'),
    version: z.string(),
    api_version: z.string(),
    description: z.string(),
    status: z.literal('ok'),
    surfaces: z.object({ base: z.string(), api: z.string() }),
    links: z
      .record(z.string(), z.string())
      .describe(
        'Absolute URLs by name: openapi, health, llms, llms_full, performance, api_health, try (GET /v1/try, the zero-credential activation proof), console (the web console for people at /ui/; absent when SVC_UI=off), and the discovery documents (MCP and A2A cards and endpoints, OAuth metadata).',
      ),
  })
  .meta({ id: 'ServiceRoot' });
export type ServiceRoot = z.infer<typeof ServiceRoot>;

export const PerformanceBench = z.object({
  name: z.string(),
  measures: z.string(),
  baseline: z.string(),
  target: z.string(),
  command: z.string(),
});

export const PerformanceProtocol = z
  .object({
    protocol: z.literal('svc.performance.v1'),
    summary: z.string(),
    method: z.array(z.string()),
    benches: z.array(PerformanceBench),
    last_local_run: z
      .object({ command: z.string(), results_file: z.string(), description: z.string() })
      .describe(
        'Where a clone keeps the figures of its last full run; the server does not serve them, since they describe the machine they ran on, not this deployment.',
      ),
  })
  .meta({ id: 'PerformanceProtocol' });
export type PerformanceProtocol = z.infer<typeof PerformanceProtocol>;

/** An OpenAPI 3.1 document; its own schema is OpenAPI's, checked by a validator in the tests. */
export const OpenApiDocument = z
  .looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }) })
  .meta({ id: 'OpenApiDocument' });
