import { z } from 'zod';
import { blackboardLimits } from '@svc/schemas';
import { integer } from '../../env-values.ts';

const count = (fallback: number) => integer(0, Number.MAX_SAFE_INTEGER, 'a count').default(fallback);
const { admission } = blackboardLimits;

/**
 * Blackboard retention, window and admission caps. Defaults are the spec's numbers; lowering them
 * lets tests reach an edge cheaply and lets an operator tighten a public board.
 */
export const blackboardConfigFrom = z
  .object({
    SVC_BLACKBOARD_RETENTION_ROWS: count(blackboardLimits.retentionRows),
    SVC_BLACKBOARD_CHANNEL_WINDOW_ROWS: count(blackboardLimits.channelWindowRows),
    SVC_BLACKBOARD_IP_PUTS_PER_HOUR: count(admission.ipPutsPerHour),
    SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR: count(admission.globalPostsPerHour),
    SVC_BLACKBOARD_GLOBAL_BYTES_PER_HOUR: count(admission.globalBytesPerHour),
    SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR: count(admission.principalPostsPerHour),
    SVC_BLACKBOARD_PRINCIPAL_BYTES_PER_HOUR: count(admission.principalBytesPerHour),
    SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: count(admission.channelPostsPerHour),
    SVC_BLACKBOARD_CHANNEL_BYTES_PER_HOUR: count(admission.channelBytesPerHour),
    SVC_BLACKBOARD_WINDOW_SECONDS: integer(1, 86_400, 'seconds').default(3600),
    SVC_BLACKBOARD_WATCH_PER_CALLER: integer(1, 10_000, 'a count').default(8),
    SVC_BLACKBOARD_WATCH_MAX_STREAMS: integer(1, 1_000_000, 'a count').default(1_000),
    SVC_BLACKBOARD_WATCH_POLL_MS: integer(50, 600_000, 'milliseconds').default(15_000),
  })
  .transform((env) => ({
    retentionRows: env.SVC_BLACKBOARD_RETENTION_ROWS,
    channelWindowRows: env.SVC_BLACKBOARD_CHANNEL_WINDOW_ROWS,
    /** Length of an admission window; 3600 (fixed UTC hours) unless a test shortens it. */
    windowSeconds: env.SVC_BLACKBOARD_WINDOW_SECONDS,
    ipPuts: env.SVC_BLACKBOARD_IP_PUTS_PER_HOUR,
    globalPosts: env.SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR,
    globalBytes: env.SVC_BLACKBOARD_GLOBAL_BYTES_PER_HOUR,
    principalPosts: env.SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR,
    principalBytes: env.SVC_BLACKBOARD_PRINCIPAL_BYTES_PER_HOUR,
    channelPosts: env.SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR,
    channelBytes: env.SVC_BLACKBOARD_CHANNEL_BYTES_PER_HOUR,
    /** Watch streams (`GET /blackboard/watch`) one client address may hold open at once. */
    watchPerCaller: env.SVC_BLACKBOARD_WATCH_PER_CALLER,
    /** Watch streams this server holds open at once, every caller together. */
    watchMaxStreams: env.SVC_BLACKBOARD_WATCH_MAX_STREAMS,
    /** The backstop: an idle stream reads its channel this often even if no wake-up came (a lost NOTIFY). */
    watchPollMs: env.SVC_BLACKBOARD_WATCH_POLL_MS,
  }));

export type BlackboardConfig = z.output<typeof blackboardConfigFrom>;

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** blackboard-config.ts's settings, read by the feature list's blackboard line. */
    blackboard: BlackboardConfig;
  }
}
