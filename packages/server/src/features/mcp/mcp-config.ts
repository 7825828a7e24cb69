import { z } from 'zod';
import { integer } from '../../env-values.ts';

/** The base-surface MCP endpoint's settings (docs/agents.md). */
export const mcpConfigFrom = z
  .object({
    SVC_MCP_TASKS_MAX_ACTIVE: integer(1, 10_000, 'a task count').default(32),
  })
  .transform((env) => ({
    /** MCP tasks one principal may have queued or running at once; a task-augmented call past it is refused (`tasks_active_limit`). */
    tasksMaxActive: env.SVC_MCP_TASKS_MAX_ACTIVE,
  }));

export type McpConfig = z.output<typeof mcpConfigFrom>;

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** mcp-config.ts's settings, read by the feature list's mcp line. */
    mcp: McpConfig;
  }
}
