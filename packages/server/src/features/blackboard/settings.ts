import { z } from 'zod';
import { blackboardLimits } from '@svc/schemas';

const count = (fallback: number) => z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(fallback);
const { admission } = blackboardLimits;

/**
 * Environment variables of the blackboard. Defaults are the spec's numbers; lowering them lets
 * tests reach an edge cheaply and lets an operator tighten a public board.
 */
export const blackboardEnvShape = {
  SVC_BLACKBOARD_RETENTION_ROWS: count(blackboardLimits.retentionRows),
  SVC_BLACKBOARD_CHANNEL_WINDOW_ROWS: count(blackboardLimits.channelWindowRows),
  SVC_BLACKBOARD_IP_PUTS_PER_HOUR: count(admission.ipPutsPerHour),
  SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR: count(admission.globalPostsPerHour),
  SVC_BLACKBOARD_GLOBAL_BYTES_PER_HOUR: count(admission.globalBytesPerHour),
  SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR: count(admission.principalPostsPerHour),
  SVC_BLACKBOARD_PRINCIPAL_BYTES_PER_HOUR: count(admission.principalBytesPerHour),
  SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: count(admission.channelPostsPerHour),
  SVC_BLACKBOARD_CHANNEL_BYTES_PER_HOUR: count(admission.channelBytesPerHour),
  /** Length of an admission window; 3600 (fixed UTC hours) unless a test shortens it. */
  SVC_BLACKBOARD_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
};

export interface BlackboardSettings {
  retentionRows: number;
  channelWindowRows: number;
  windowSeconds: number;
  ipPuts: number;
  globalPosts: number;
  globalBytes: number;
  principalPosts: number;
  principalBytes: number;
  channelPosts: number;
  channelBytes: number;
}

type Parsed = { [K in keyof typeof blackboardEnvShape]: number };

export function blackboardSettingsFrom(env: Parsed): BlackboardSettings {
  return {
    retentionRows: env.SVC_BLACKBOARD_RETENTION_ROWS,
    channelWindowRows: env.SVC_BLACKBOARD_CHANNEL_WINDOW_ROWS,
    windowSeconds: env.SVC_BLACKBOARD_WINDOW_SECONDS,
    ipPuts: env.SVC_BLACKBOARD_IP_PUTS_PER_HOUR,
    globalPosts: env.SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR,
    globalBytes: env.SVC_BLACKBOARD_GLOBAL_BYTES_PER_HOUR,
    principalPosts: env.SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR,
    principalBytes: env.SVC_BLACKBOARD_PRINCIPAL_BYTES_PER_HOUR,
    channelPosts: env.SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR,
    channelBytes: env.SVC_BLACKBOARD_CHANNEL_BYTES_PER_HOUR,
  };
}
