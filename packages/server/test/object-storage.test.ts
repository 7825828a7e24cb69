import { createHash, generateKeyPairSync, verify } from 'node:crypto';
import test from 'ava';
import { checkStorageUrl, resolveStoragePolicy } from '@svc/client';
import { GcsObjectStore } from '../src/storage/gcs-object-store.ts';
import { encodeObjectKey } from '../src/storage/object-store.ts';
import { signV4Url, verifyV4Url } from '../src/storage/v4-signing.ts';

const key = Buffer.from('k'.repeat(32));
const base = { key, accessId: 'svc-local', baseUrl: 'http://127.0.0.1:8787/api/storage', bucket: 'svc-catalog', objectKey: 'a/b c.txt', generation: '42' };
const verifyUrl = (url: string, now?: Date) => {
  const parsed = new URL(url);
  return verifyV4Url({
    key,
    accessId: 'svc-local',
    bucket: 'svc-catalog',
    objectKey: 'a/b c.txt',
    host: parsed.host,
    query: Object.fromEntries(parsed.searchParams),
    now,
  });
};

test('built-in signer: expires 1 and 300 sign and verify; 0 and 301 are refused', (t) => {
  for (const expiresInSeconds of [1, 300]) t.is(verifyUrl(signV4Url({ ...base, expiresInSeconds })), null);
  for (const expiresInSeconds of [0, 301]) t.throws(() => signV4Url({ ...base, expiresInSeconds }), { instanceOf: RangeError });
});

test('built-in signer: a URL is good until its expiry and refused one second after', (t) => {
  const signedAt = new Date('2026-11-21T12:00:00Z');
  const url = signV4Url({ ...base, expiresInSeconds: 300, now: signedAt });
  t.is(verifyUrl(url, new Date(signedAt.getTime() + 300_000)), null);
  t.is(verifyUrl(url, new Date(signedAt.getTime() + 301_000))?.code, 'signed_url_expired');
  t.is(verifyUrl(url, new Date(signedAt.getTime() - 120_000))?.code, 'signed_url_invalid', 'a date in the future is refused');
});

test('built-in signer: another key, object or host breaks the signature', (t) => {
  const url = new URL(signV4Url({ ...base, expiresInSeconds: 60 }));
  const query = Object.fromEntries(url.searchParams);
  t.is(
    verifyV4Url({ key: Buffer.from('x'.repeat(32)), accessId: 'svc-local', bucket: 'svc-catalog', objectKey: 'a/b c.txt', host: url.host, query })?.code,
    'signed_url_invalid',
  );
  t.is(verifyV4Url({ key, accessId: 'svc-local', bucket: 'svc-catalog', objectKey: 'a/b d.txt', host: url.host, query })?.code, 'signed_url_invalid');
  t.is(verifyV4Url({ key, accessId: 'svc-local', bucket: 'svc-catalog', objectKey: 'a/b c.txt', host: 'evil.test', query })?.code, 'signed_url_invalid');
});

/**
 * GCS V4 signing through @google-cloud/storage, offline: the library signs with a local RSA key,
 * and the signature is checked here against the V4 canonical request (the algorithm the
 * library's conformance tests pin down) with the public key. No network is touched.
 */
test('GCS store: V4 signed read URL pinned to a generation, verifiable with the service account key', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const email = 'svc-test@svc-project.iam.gserviceaccount.com';
  const store = new GcsObjectStore({
    bucket: 'svc-test-bucket',
    storageOptions: {
      projectId: 'svc-project',
      credentials: { client_email: email, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string },
    },
  });
  const signed = new URL(await store.signedReadUrl('models/x/v1/weights file.bin', { generation: '1700000000000000', expiresInSeconds: 300 }));
  t.is(signed.protocol, 'https:');
  t.is(signed.host, 'storage.googleapis.com');
  t.is(signed.pathname, `/svc-test-bucket/${encodeObjectKey('models/x/v1/weights file.bin')}`);
  const query = new Map([...signed.searchParams].map(([name, value]) => [name, value]));
  t.is(query.get('X-Goog-Algorithm'), 'GOOG4-RSA-SHA256');
  t.is(query.get('X-Goog-Expires'), '300');
  t.is(query.get('generation'), '1700000000000000');
  t.true(query.get('X-Goog-Credential')!.startsWith(`${email}/`));

  const canonicalQuery = [...signed.searchParams]
    .filter(([name]) => name !== 'X-Goog-Signature')
    .map(([name, value]) => [encodeURIComponent(name), encodeURIComponent(value)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalRequest = ['GET', signed.pathname, canonicalQuery, 'host:storage.googleapis.com', '', 'host', 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = query.get('X-Goog-Credential')!.split('/').slice(1).join('/');
  const stringToSign = ['GOOG4-RSA-SHA256', query.get('X-Goog-Date'), scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  t.true(
    verify('RSA-SHA256', Buffer.from(stringToSign), publicKey, Buffer.from(query.get('X-Goog-Signature')!, 'hex')),
    'signature verifies with the public key',
  );

  // The client's strict default policy accepts a real GCS URL (X-Goog-* fields are case-insensitive).
  t.is(checkStorageUrl(signed.toString(), resolveStoragePolicy(undefined, {})), null);
  t.deepEqual(store.hosts(), ['storage.googleapis.com']);
});
