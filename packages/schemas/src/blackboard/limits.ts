/** The blackboard's fixed limits (spec section 8). Admission caps are server configuration; these are their defaults. */
export const blackboardLimits = {
  textMaxChars: 16_000,
  valueMaxBytes: 65_536,
  taskMaxChars: 40,
  topicsMax: 8,
  topicMaxChars: 48,
  artifactIdMaxChars: 200,
  keyMaxChars: 200,
  keyFromInputMaxChars: 16_000,
  qMaxChars: 200,
  readLimitDefault: 50,
  readLimitMax: 200,
  ttlDefaultSeconds: 2_592_000,
  ttlMinSeconds: 60,
  ttlMaxSeconds: 7_776_000,
  idempotencyKeyMaxChars: 120,
  editTokenMaxChars: 200,
  retentionRows: 100_000,
  channelWindowRows: 1_000,
  threadDepth: 32,
  runtimeVersionsMax: 16,
  admission: {
    ipPutsPerHour: 1_200,
    globalPostsPerHour: 3_000,
    globalBytesPerHour: 67_108_864,
    principalPostsPerHour: 240,
    principalBytesPerHour: 8_388_608,
    channelPostsPerHour: 120,
    channelBytesPerHour: 4_194_304,
  },
} as const;

export const BLACKBOARD_SCHEMA_ID = 'svc.blackboard.v1' as const;
