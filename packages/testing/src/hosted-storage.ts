import { startLocalS3 } from './local-s3.ts';

/**
 * The object store a catalog test runs against: the built-in one (default), or with
 * `SVC_TEST_STORAGE=s3` a local S3 (s3rver behind a SigV4 check) reached through
 * `SVC_S3_ENDPOINT`, path-style, credentials from the SDK's own AWS_* variables. A test file
 * runs against S3 by setting that variable and importing the local one, so the two cannot drift.
 */
export interface HostedStorage {
  kind: 'local' | 's3';
  /** Settings for startTestServer's env. */
  env: Record<string, string>;
  /** `host:port` signed Locations point at; undefined: the server's own (the built-in store). */
  host: string | undefined;
  /** Query fields a signed Location carries, lower-cased, and the one holding its lifetime. */
  signedFields: string[];
  expiresField: string;
  /** What the store answers a refused signed URL with: a bad signature, an expired URL. */
  refusals: { invalid: string; expired: string };
  /** The refusal code of a 403 answer: svc's JSON `code`, or S3's XML `<Code>`. */
  refusalCode(response: Response): Promise<string | undefined>;
  close(): Promise<void>;
}

export async function startHostedStorage(kind = process.env.SVC_TEST_STORAGE ?? 'local'): Promise<HostedStorage> {
  if (kind === 'local') {
    return {
      kind,
      env: {},
      host: undefined,
      signedFields: ['x-goog-algorithm', 'x-goog-credential', 'x-goog-date', 'x-goog-expires', 'x-goog-signedheaders', 'x-goog-signature', 'generation'],
      expiresField: 'x-goog-expires',
      refusals: { invalid: 'signed_url_invalid', expired: 'signed_url_expired' },
      refusalCode: async (response) => ((await response.json()) as { code?: string }).code,
      close: async () => {},
    };
  }
  if (kind !== 's3') throw new Error(`SVC_TEST_STORAGE=${kind}: expected local or s3`);
  const s3 = await startLocalS3();
  process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
  return {
    kind,
    env: { SVC_STORAGE: 's3', SVC_S3_ENDPOINT: s3.endpoint, SVC_S3_FORCE_PATH_STYLE: 'true', SVC_STORAGE_BUCKET: s3.bucket },
    host: s3.host,
    signedFields: ['x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-expires', 'x-amz-signedheaders', 'x-amz-signature', 'generation'],
    expiresField: 'x-amz-expires',
    refusals: { invalid: 'SignatureDoesNotMatch', expired: 'AccessDenied' },
    refusalCode: async (response) => /<Code>([^<]+)<\/Code>/.exec(await response.text())?.[1],
    close: () => s3.close(),
  };
}

/** A Location's query field, its name compared case-insensitively (GCS and S3 write `X-Goog-*`, `X-Amz-*`). */
export function signedField(url: URL, name: string): string | null {
  for (const [key, value] of url.searchParams) if (key.toLowerCase() === name) return value;
  return null;
}

/** Sets or deletes a query field whatever the case it was written in. */
export function changeSignedField(url: URL, name: string, value: string | undefined): void {
  const written = [...url.searchParams.keys()].find((key) => key.toLowerCase() === name) ?? name;
  if (value === undefined) url.searchParams.delete(written);
  else url.searchParams.set(written, value);
}
