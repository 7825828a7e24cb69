/**
 * The client's resume, skip and check tests (verified-download-resume.test.ts) again, with the
 * hosted files in a local S3 (s3rver behind a SigV4 check) through SVC_STORAGE=s3: a partial file
 * is completed by S3's own Range and If-Range answers.
 */
process.env.SVC_TEST_STORAGE = 's3';
await import('./verified-download-resume.test.ts');
