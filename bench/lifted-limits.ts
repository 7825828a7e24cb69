/**
 * The blackboard's admission windows, lifted: a bench's load comes from one client, one address
 * and a few channels, which the per-hour windows exist to refuse. Benches that put measure the
 * put path, not the refusal.
 */
const lifted = String(Number.MAX_SAFE_INTEGER);

export const LIFTED_BLACKBOARD_LIMITS = {
  SVC_BLACKBOARD_IP_PUTS_PER_HOUR: lifted,
  SVC_BLACKBOARD_GLOBAL_POSTS_PER_HOUR: lifted,
  SVC_BLACKBOARD_GLOBAL_BYTES_PER_HOUR: lifted,
  SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR: lifted,
  SVC_BLACKBOARD_PRINCIPAL_BYTES_PER_HOUR: lifted,
  SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: lifted,
  SVC_BLACKBOARD_CHANNEL_BYTES_PER_HOUR: lifted,
} as const;
