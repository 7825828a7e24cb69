import { z } from 'zod';
import { KeyLimits, type EffectiveLimits } from '@svc/schemas';

/** `requests_per_minute=600, concurrent_requests=10`: the contract's limit names and values, checked by its schema. */
const limitList = z
  .string()
  .transform((value, context) => {
    const entries: Record<string, number | null> = {};
    for (const part of value.split(/[\s,]+/).filter(Boolean)) {
      const match = /^([a-z_]+)=(-?\d+(?:\.\d+)?)$/.exec(part);
      if (!match) {
        context.addIssue({ code: 'custom', message: `expected name=integer pairs separated by commas (got "${part}")` });
        return z.NEVER;
      }
      entries[match[1]!] = Number(match[2]);
    }
    return entries;
  })
  .pipe(KeyLimits)
  .transform(withoutNulls);

function withoutNulls(limits: KeyLimits): EffectiveLimits {
  return Object.fromEntries(Object.entries(limits).filter(([, value]) => typeof value === 'number')) as EffectiveLimits;
}

/**
 * Default limits (docs/limits.md): for developer keys without a value of their own, and for each
 * other principal kind. Unset: no limit. The spec's own limits (per address on OAuth, per
 * principal on the PDF pool, jobs and the blackboard) are separate and unchanged.
 */
export const limitsConfigFrom = z
  .object({
    SVC_LIMITS_DEVELOPER_KEY: limitList.optional(),
    SVC_LIMITS_AGENT: limitList.optional(),
    SVC_LIMITS_DEMO: limitList.optional(),
    SVC_LIMITS_OPEN: limitList.optional(),
  })
  .transform((env) => ({
    /** Each field a developer key leaves unset takes this value. */
    developerKey: env.SVC_LIMITS_DEVELOPER_KEY ?? {},
    /** Per principal kind, for callers other than developer keys (OAuth bearer calls, the demo token, open access). */
    byKind: {
      ...(env.SVC_LIMITS_AGENT ? { agent: env.SVC_LIMITS_AGENT } : {}),
      ...(env.SVC_LIMITS_DEMO ? { demo: env.SVC_LIMITS_DEMO } : {}),
      ...(env.SVC_LIMITS_OPEN ? { open: env.SVC_LIMITS_OPEN } : {}),
    },
  }));

export type LimitsConfig = z.output<typeof limitsConfigFrom>;

/** A key's own limits over the defaults for keys, as the limiter reads them. */
export function effectiveKeyLimits(own: KeyLimits | null | undefined, defaults: EffectiveLimits): EffectiveLimits {
  return { ...defaults, ...withoutNulls(own ?? {}) };
}

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** limits-config.ts's settings, read by the feature list's limits line. */
    limits: LimitsConfig;
  }
}
