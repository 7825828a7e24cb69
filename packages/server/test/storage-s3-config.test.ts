import test from 'ava';
import { ConfigError, loadConfig } from '../src/index.ts';
import { S3ObjectStore } from '../src/storage/s3-object-store.ts';

/** SVC_STORAGE=s3's settings, and that the host a signed URL points at is the one clients are told to allow. */
test('SVC_STORAGE=s3 with its endpoint, region and path-style settings; bad values stop the server naming the variable', (t) => {
  t.deepEqual(loadConfig({ SVC_STORAGE: 's3' }).storage.s3, { endpoint: undefined, region: 'us-east-1', forcePathStyle: false });
  t.like(
    loadConfig({ SVC_STORAGE: 's3', SVC_S3_ENDPOINT: 'http://minio.internal:9000/', SVC_S3_REGION: 'eu-central-1', SVC_S3_FORCE_PATH_STYLE: 'true' }).storage,
    { kind: 's3', s3: { endpoint: 'http://minio.internal:9000', region: 'eu-central-1', forcePathStyle: true } },
  );
  for (const [variable, value] of [
    ['SVC_STORAGE', 'minio'],
    ['SVC_S3_ENDPOINT', 'minio.internal:9000'],
    ['SVC_S3_ENDPOINT', 'ftp://minio.internal'],
    ['SVC_S3_REGION', 'EU Central'],
    ['SVC_S3_FORCE_PATH_STYLE', 'yes'],
  ] as const)
    t.throws(() => loadConfig({ SVC_STORAGE: 's3', [variable]: value }), { instanceOf: ConfigError, message: new RegExp(variable) }, `${variable}=${value}`);
});

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const signedHost = async (store: S3ObjectStore) => new URL(await store.signedReadUrl('a/b c.bin', { generation: 'etag-1', expiresInSeconds: 300 })).host;

test("a signed URL's host is the store's advertised host: AWS virtual-hosted or path-style, an endpoint's either way", async (t) => {
  const cases = [
    [{ region: 'eu-west-1', forcePathStyle: false }, 'svc-catalog.s3.eu-west-1.amazonaws.com'],
    [{ region: 'eu-west-1', forcePathStyle: true }, 's3.eu-west-1.amazonaws.com'],
    [{ region: 'us-east-1', forcePathStyle: true, endpoint: 'https://minio.internal:9000' }, 'minio.internal:9000'],
    [{ region: 'auto', forcePathStyle: false, endpoint: 'https://account.r2.cloudflarestorage.com' }, 'svc-catalog.account.r2.cloudflarestorage.com'],
    // Names a host cannot carry: the SDK addresses them path-style whatever is asked.
    [{ region: 'eu-west-1', forcePathStyle: false, bucket: 'svc.catalog' }, 's3.eu-west-1.amazonaws.com'],
    [{ region: 'eu-west-1', forcePathStyle: false, bucket: 'svc_catalog', endpoint: 'https://minio.internal:9000' }, 'minio.internal:9000'],
  ] as const;
  for (const [options, host] of cases) {
    const store = new S3ObjectStore({ bucket: 'svc-catalog', credentials, ...options });
    t.deepEqual(store.hosts(), [host]);
    t.is(await signedHost(store), host);
  }
});

test('a bucket the SDK cannot address at the endpoint stops the start with the setting to change', (t) => {
  t.throws(() => new S3ObjectStore({ bucket: 'svc.catalog', region: 'us-east-1', forcePathStyle: false, endpoint: 'http://127.0.0.1:9000', credentials }), {
    message: /cannot address bucket svc\.catalog .*SVC_S3_FORCE_PATH_STYLE=true/,
  });
  t.deepEqual(new S3ObjectStore({ bucket: 'svc.catalog', region: 'us-east-1', forcePathStyle: true, endpoint: 'http://127.0.0.1:9000', credentials }).hosts(), [
    '127.0.0.1:9000',
  ]);
});
