import { z } from 'zod';
import { integer } from '../../env-values.ts';

const count = (fallback: number) => integer(0, 1_000_000, 'a request count').default(fallback);

/**
 * Per-principal submission limits of catalog requests (the spec leaves them open). Only new
 * requests count; replays never do. 0 refuses every new request (a way to pause filing).
 */
export const requestsConfigFrom = z
  .object({
    SVC_REQUESTS_PER_HOUR: count(20),
    SVC_REQUESTS_PER_DAY: count(100),
  })
  .transform((env) => ({ perHour: env.SVC_REQUESTS_PER_HOUR, perDay: env.SVC_REQUESTS_PER_DAY }));

export type RequestsConfig = z.output<typeof requestsConfigFrom>;

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** requests-config.ts's settings, read by the feature list's requests line. */
    requests: RequestsConfig;
  }
}
