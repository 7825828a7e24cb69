import { z } from 'zod';
import { backstopDefaultMs } from '../../db/backstop.ts';
import { integer } from '../../env-values.ts';

/**
 * The durable task store's leases, attempts and retention (docs/tasks.md). Tests lower the lease
 * and the backstop to reach a dead runner's expiry quickly.
 */
export const tasksConfigFrom = z
  .object({
    SVC_TASKS_LEASE_SECONDS: integer(1, 3600, 'seconds').default(30),
    SVC_TASKS_MAX_ATTEMPTS: integer(1, 100, 'an attempt count').default(2),
    SVC_TASKS_RESULT_TTL_SECONDS: integer(1, 30 * 86_400, 'seconds').default(86_400),
    // Unset: backstopDefaultMs, by where the database is.
    SVC_TASKS_BACKSTOP_MS: integer(50, 600_000, 'milliseconds').optional(),
    DATABASE_URL: z.string().optional(),
    SVC_TASKS_RUNNERS: integer(0, 256, 'a runner count').default(16),
  })
  .transform((env) => ({
    /** How long a claim holds a task without renewal; a runner renews at a third of it. */
    leaseSeconds: env.SVC_TASKS_LEASE_SECONDS,
    /** Claims a task may take; past them a task whose runner died ends `failed` (`task_runner_lost`). */
    maxAttempts: env.SVC_TASKS_MAX_ATTEMPTS,
    /** How long an ended task (its result and events) is kept for its owner. */
    resultTtlSeconds: env.SVC_TASKS_RESULT_TTL_SECONDS,
    /**
     * The slow poll behind NOTIFY: what no notification announces (a lease that ran out on a
     * replica that died, a notification lost while the listening connection was down) is found
     * within this long. Idle, it is the store's only database work.
     */
    backstopMs: env.SVC_TASKS_BACKSTOP_MS ?? backstopDefaultMs(env.DATABASE_URL),
    /** Tasks this process runs at once (0: it only creates and reads tasks). */
    runners: env.SVC_TASKS_RUNNERS,
  }));

export type TasksConfig = z.output<typeof tasksConfigFrom>;

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** tasks-config.ts's settings, read by the feature list's tasks line. */
    tasks: TasksConfig;
  }
}
