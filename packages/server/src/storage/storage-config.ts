import { z } from 'zod';
import { integer, secret } from '../env-values.ts';

/** Where hosted catalog files live: the built-in store under the data directory, or Google Cloud Storage. */
export const storageConfigFrom = z
  .object({
    SVC_STORAGE: z.enum(['local', 'gcs']).default('local'),
    SVC_STORAGE_BUCKET: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/, 'must be a valid bucket name')
      .default('svc-catalog'),
    SVC_STORAGE_SIGNING_KEY: secret(32).optional(),
    SVC_STORAGE_URL_TTL_SECONDS: integer(1, 300, 'seconds').default(300),
    SVC_GCS_PROJECT: z.string().min(1).optional(),
  })
  .transform((env) => ({
    kind: env.SVC_STORAGE,
    bucket: env.SVC_STORAGE_BUCKET,
    /** HMAC key of the built-in store's signed URLs; generated into the data directory when absent. */
    signingKey: env.SVC_STORAGE_SIGNING_KEY,
    urlTtlSeconds: env.SVC_STORAGE_URL_TTL_SECONDS,
    gcsProject: env.SVC_GCS_PROJECT,
  }));

export type StorageConfig = z.output<typeof storageConfigFrom>;
