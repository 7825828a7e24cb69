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

/** Effective limits by a key's own limits object: a cached key presents the same object on every request. */
const effectiveByOwn = new WeakMap<KeyLimits, { defaults: EffectiveLimits; limits: EffectiveLimits }>();
const noOwnLimits: KeyLimits = {};

/**
 * A key's own limits over the defaults for keys, as the limiter reads them: made once per own
 * limits object (frozen, shared by the requests of a cached key), since the spread over a row's
 * JSON cost about 7 µs a request in a profile of a limited key on `GET /v1/models` (issue 42).
 */
export function effectiveKeyLimits(own: KeyLimits | null | undefined, defaults: EffectiveLimits): EffectiveLimits {
  const key = own ?? noOwnLimits;
  const made = effectiveByOwn.get(key);
  if (made?.defaults === defaults) return made.limits;
  const limits = Object.freeze({ ...defaults, ...withoutNulls(key) });
  effectiveByOwn.set(key, { defaults, limits });
  return limits;
}

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** limits-config.ts's settings, read by the feature list's limits line. */
    limits: LimitsConfig;
  }
}
