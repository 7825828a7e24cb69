import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { encodeObjectKey } from './object-store.ts';

export const V4_ALGORITHM = 'GOOG4-HMAC-SHA256';
export const MAX_EXPIRES_SECONDS = 300;
/** Clock skew tolerated between the signer and the verifier. */
const CLOCK_SKEW_SECONDS = 60;

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
/** `20261121T112233Z` */
export const v4Timestamp = (date: Date) =>
  date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

function parseV4Timestamp(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s] = match;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

const rfc3986 = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function canonicalQuery(fields: Record<string, string>): string {
  return Object.keys(fields)
    .sort()
    .map((name) => `${rfc3986(name)}=${rfc3986(fields[name]!)}`)
    .join('&');
}

/** The string signed in GCS V4 style: canonical request over method, path, query and the host header. */
function stringToSign(input: { bucket: string; key: string; host: string; fields: Record<string, string> }): string {
  const canonicalRequest = [
    'GET',
    `/${input.bucket}/${encodeObjectKey(input.key)}`,
    canonicalQuery(input.fields),
    `host:${input.host.toLowerCase()}`,
    '',
    'host',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const date = input.fields['x-goog-date']!;
  const scope = input.fields['x-goog-credential']!.split('/').slice(1).join('/');
  return [V4_ALGORITHM, date, scope, sha256Hex(canonicalRequest)].join('\n');
}

export interface SignOptions {
  key: Buffer;
  /** Names the signing key in `x-goog-credential` (`svc-local/<date>/auto/storage/goog4_request`). */
  accessId: string;
  baseUrl: string;
  bucket: string;
  objectKey: string;
  generation: string;
  expiresInSeconds: number;
  now?: Date;
}

/**
 * A V4-style signed URL for the built-in store: the same query fields as a GCS V4 URL, signed
 * with HMAC-SHA256 over the canonical request (the host header is signed, so a URL does not
 * work against another host).
 */
export function signV4Url(options: SignOptions): string {
  if (!Number.isInteger(options.expiresInSeconds) || options.expiresInSeconds < 1 || options.expiresInSeconds > MAX_EXPIRES_SECONDS) {
    throw new RangeError(`expiresInSeconds must be an integer in 1..${MAX_EXPIRES_SECONDS}`);
  }
  const now = options.now ?? new Date();
  const timestamp = v4Timestamp(now);
  const url = new URL(`${options.baseUrl.replace(/(?<!\/)\/+$/, '')}/${options.bucket}/${encodeObjectKey(options.objectKey)}`);
  const fields: Record<string, string> = {
    'x-goog-algorithm': V4_ALGORITHM,
    'x-goog-credential': `${options.accessId}/${timestamp.slice(0, 8)}/auto/storage/goog4_request`,
    'x-goog-date': timestamp,
    'x-goog-expires': String(options.expiresInSeconds),
    'x-goog-signedheaders': 'host',
    generation: options.generation,
  };
  const signature = createHmac('sha256', options.key)
    .update(stringToSign({ bucket: options.bucket, key: options.objectKey, host: url.host, fields }))
    .digest('hex');
  url.search = `${canonicalQuery(fields)}&x-goog-signature=${signature}`;
  return url.toString();
}

export type SignedUrlProblem = { code: 'signed_url_invalid' | 'signed_url_expired'; message: string };

/**
 * Checks a signed URL's fields on every fetch: all present, the algorithm and signed headers
 * as issued, expiry within 1..300 and not passed, the credential scope matching the date, and
 * the HMAC (compared in constant time). Answers the first problem found, or null.
 */
export function verifyV4Url(input: {
  key: Buffer;
  accessId: string;
  bucket: string;
  objectKey: string;
  host: string;
  query: Record<string, string | undefined>;
  now?: Date;
}): SignedUrlProblem | null {
  const names = ['x-goog-algorithm', 'x-goog-credential', 'x-goog-date', 'x-goog-expires', 'x-goog-signedheaders', 'x-goog-signature', 'generation'] as const;
  const missing = names.filter((name) => !input.query[name]);
  if (missing.length > 0) return { code: 'signed_url_invalid', message: `The signed URL lacks ${missing.join(', ')}.` };
  const q = input.query as Record<(typeof names)[number], string>;
  if (q['x-goog-algorithm'] !== V4_ALGORITHM) return { code: 'signed_url_invalid', message: `x-goog-algorithm must be ${V4_ALGORITHM}.` };
  if (q['x-goog-signedheaders'] !== 'host') return { code: 'signed_url_invalid', message: 'x-goog-signedheaders must be "host".' };
  if (!/^\d{1,3}$/.test(q['x-goog-expires']) || Number(q['x-goog-expires']) < 1 || Number(q['x-goog-expires']) > MAX_EXPIRES_SECONDS) {
    return { code: 'signed_url_invalid', message: `x-goog-expires must be an integer in 1..${MAX_EXPIRES_SECONDS}.` };
  }
  const signedAt = parseV4Timestamp(q['x-goog-date']);
  if (!signedAt) return { code: 'signed_url_invalid', message: 'x-goog-date must look like 20261121T112233Z.' };
  const credential = q['x-goog-credential'].split('/');
  if (
    credential.length !== 5 ||
    credential[0] !== input.accessId ||
    credential[1] !== q['x-goog-date'].slice(0, 8) ||
    credential.slice(2).join('/') !== 'auto/storage/goog4_request'
  ) {
    return { code: 'signed_url_invalid', message: "x-goog-credential does not name this store's key and the signing date." };
  }
  if (!/^[0-9a-f]{64}$/.test(q['x-goog-signature'])) return { code: 'signed_url_invalid', message: 'x-goog-signature must be 64 hex characters.' };
  const fields: Record<string, string> = Object.fromEntries(names.filter((name) => name !== 'x-goog-signature').map((name) => [name, q[name]]));
  const expected = createHmac('sha256', input.key)
    .update(stringToSign({ bucket: input.bucket, key: input.objectKey, host: input.host, fields }))
    .digest();
  if (!timingSafeEqual(expected, Buffer.from(q['x-goog-signature'], 'hex')))
    return { code: 'signed_url_invalid', message: 'The signature does not match this URL (tampered, or signed for another host or key).' };
  const now = (input.now ?? new Date()).getTime();
  if (now < signedAt.getTime() - CLOCK_SKEW_SECONDS * 1000) return { code: 'signed_url_invalid', message: 'x-goog-date is in the future.' };
  if (now > signedAt.getTime() + Number(q['x-goog-expires']) * 1000)
    return {
      code: 'signed_url_expired',
      message: `The signed URL expired ${Math.round((now - signedAt.getTime()) / 1000 - Number(q['x-goog-expires']))} s ago; ask /api/downloads for a fresh one.`,
    };
  return null;
}
