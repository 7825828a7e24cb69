import { z } from 'zod';
import { flag, httpUrl, integer, secret, withoutTrailingSlash } from '../env-values.ts';

/** Where hosted catalog files live: the built-in store under the data directory, Google Cloud Storage, or S3 (and S3-compatible stores). */
export const storageConfigFrom = z
  .object({
    SVC_STORAGE: z.enum(['local', 'gcs', 's3']).default('local'),
    SVC_STORAGE_BUCKET: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/, 'must be a valid bucket name')
      .default('svc-catalog'),
    SVC_STORAGE_SIGNING_KEY: secret(32).optional(),
    SVC_STORAGE_URL_TTL_SECONDS: integer(1, 300, 'seconds').default(300),
    SVC_GCS_PROJECT: z.string().min(1).optional(),
    /** An S3-compatible endpoint (MinIO, Ceph, R2, ...); absent means AWS's regional endpoint. */
    SVC_S3_ENDPOINT: httpUrl.transform(withoutTrailingSlash).optional(),
    SVC_S3_REGION: z
      .string()
      .regex(/^[a-z0-9-]{1,64}$/, 'must be a region name such as us-east-1')
      .default('us-east-1'),
    SVC_S3_FORCE_PATH_STYLE: flag.default(false),
  })
  .transform((env) => ({
    kind: env.SVC_STORAGE,
    bucket: env.SVC_STORAGE_BUCKET,
    /** HMAC key of the built-in store's signed URLs; generated into the data directory when absent. */
    signingKey: env.SVC_STORAGE_SIGNING_KEY,
    urlTtlSeconds: env.SVC_STORAGE_URL_TTL_SECONDS,
    gcsProject: env.SVC_GCS_PROJECT,
    /** Credentials are the AWS SDK's own chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profiles, roles). */
    s3: { endpoint: env.SVC_S3_ENDPOINT, region: env.SVC_S3_REGION, forcePathStyle: env.SVC_S3_FORCE_PATH_STYLE },
  }));

export type StorageConfig = z.output<typeof storageConfigFrom>;
