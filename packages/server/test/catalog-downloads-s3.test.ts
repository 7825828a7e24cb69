/**
 * The catalog's download tests (catalog-downloads.test.ts) again, with hosted files in a local
 * S3 (s3rver behind a SigV4 check) through SVC_STORAGE=s3, SVC_S3_ENDPOINT and path-style
 * addressing: the same file, so the two stores are held to the same checks.
 */
process.env.SVC_TEST_STORAGE = 's3';
await import('./catalog-downloads.test.ts');
