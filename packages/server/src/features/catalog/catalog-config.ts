import { z } from 'zod';
import { integer } from '../../env-values.ts';

/** The demo catalog and the lifetime of a download's completion token. */
export const catalogConfigFrom = z
  .object({
    SVC_CATALOG_DEMO: z.enum(['auto', 'on', 'off']).default('auto'),
    SVC_COMPLETION_TOKEN_TTL_SECONDS: integer(60, 86_400, 'seconds').default(3600),
  })
  .transform((env) => ({
    /** `auto`: load the demo catalog into an empty embedded database; `on`: into any empty database. */
    demo: env.SVC_CATALOG_DEMO,
    completionTokenTtlSeconds: env.SVC_COMPLETION_TOKEN_TTL_SECONDS,
  }));

export type CatalogConfig = z.output<typeof catalogConfigFrom>;

declare module '../../server-config.ts' {
  interface FeatureConfigs {
    /** catalog-config.ts's settings, read by the feature list's catalog line. */
    catalog: CatalogConfig;
  }
}
