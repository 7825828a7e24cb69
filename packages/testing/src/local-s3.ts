import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
// @ts-expect-error s3rver ships no types; only its constructor, run() and close() are used.
import S3rver from 's3rver';

/**
 * A local S3 for tests: s3rver (an S3 implementation speaking S3's REST wire format: PutObject,
 * GetObject with Range, HeadObject, multipart uploads) behind a front that checks every request's
 * SigV4 signature, Authorization header or presigned query, and a presigned URL's expiry. s3rver
 * 3.7 parses SigV4 but never checks it (its source says so), and a test of presigned URLs that
 * any signature passes proves nothing. The front forwards checked requests unchanged.
 */
export interface LocalS3 {
  /** What `SVC_S3_ENDPOINT` takes (path-style addressing: `SVC_S3_FORCE_PATH_STYLE=true`). */
  endpoint: string;
  /** `host:port` of the endpoint, for a client's storage host policy. */
  host: string;
  bucket: string;
  region: string;
  /** s3rver's built-in account, which the SDK's AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY name. */
  accessKeyId: string;
  secretAccessKey: string;
  /** Every request that passed the signature check: method and query field names (`uploads`, `partNumber`, ...). */
  requests: Array<{ method: string; path: string; query: string[] }>;
  /** Requests refused by the signature check, with the reason. */
  refused: Array<{ method: string; path: string; reason: string }>;
  /** A signed request this answers true for gets 500 InternalError instead of reaching s3rver (a store failing mid-upload). */
  failWhen: ((request: { method: string; path: string; query: URLSearchParams }) => boolean) | undefined;
  close(): Promise<void>;
}

const ACCESS_KEY_ID = 'S3RVER';
const SECRET_ACCESS_KEY = 'S3RVER';

/** RFC 3986 encoding, as SigV4's canonical request wants it. */
const encode = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const hmac = (key: Buffer | string, text: string) => createHmac('sha256', key).update(text).digest();

/** `20261206T233239Z` to a Date. */
const amzDate = (value: string) =>
  new Date(`${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}T${value.slice(9, 11)}:${value.slice(11, 13)}:${value.slice(13, 15)}Z`);

/** The reason a request's SigV4 signature does not hold, or null when it does. */
export function sigV4Problem(
  request: { method: string; url: string; headers: IncomingMessage['headers'] },
  secretAccessKey: string,
  now = new Date(),
): string | null {
  const [rawPath, rawQuery = ''] = request.url.split('?', 2) as [string, string?];
  const query = rawQuery
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const at = pair.indexOf('=');
      const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
      return [decodeURIComponent(name), decodeURIComponent(value)] as [string, string];
    });
  const field = (name: string) => query.find(([key]) => key === name)?.[1];
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value.join(',') : value;
  };
  let credential: string;
  let signedHeaders: string;
  let signature: string;
  let date: string;
  let payloadHash: string;
  const presigned = field('X-Amz-Algorithm') !== undefined;
  if (presigned) {
    if (field('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256') return 'unknown X-Amz-Algorithm';
    credential = field('X-Amz-Credential') ?? '';
    signedHeaders = field('X-Amz-SignedHeaders') ?? '';
    signature = field('X-Amz-Signature') ?? '';
    date = field('X-Amz-Date') ?? '';
    payloadHash = field('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD';
    const expires = Number(field('X-Amz-Expires'));
    if (!Number.isInteger(expires) || expires < 1 || expires > 604_800) return 'X-Amz-Expires out of range';
    if (now.getTime() > amzDate(date).getTime() + expires * 1000) return 'Request has expired';
  } else {
    const authorization = /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/.exec(header('authorization') ?? '');
    if (!authorization) return 'no SigV4 Authorization header';
    [, credential, signedHeaders, signature] = authorization as unknown as [string, string, string, string];
    date = header('x-amz-date') ?? '';
    payloadHash = header('x-amz-content-sha256') ?? '';
    if (!payloadHash) return 'no x-amz-content-sha256';
  }
  const [accessKeyId, day, region, service, terminator] = credential.split('/');
  if (accessKeyId !== ACCESS_KEY_ID || !day || !region || service !== 's3' || terminator !== 'aws4_request' || !date.startsWith(day))
    return 'bad credential scope';
  if (Math.abs(now.getTime() - amzDate(date).getTime()) > 15 * 60_000 && !presigned) return 'request time too skewed';

  const canonicalPath = rawPath
    .split('/')
    .map((segment) => encode(decodeURIComponent(segment)))
    .join('/');
  const canonicalQuery = query
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [encode(name), encode(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const headerNames = signedHeaders.split(';');
  if (!headerNames.includes('host')) return 'host is not signed';
  const canonicalHeaders = headerNames.map((name) => `${name}:${(header(name) ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [request.method, canonicalPath, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day), region), 's3'), 'aws4_request');
  const expected = hmac(key, stringToSign);
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) ? null : 'SignatureDoesNotMatch';
}

function refuse(response: ServerResponse, reason: string): void {
  const code = reason === 'Request has expired' ? 'AccessDenied' : 'SignatureDoesNotMatch';
  response.writeHead(403, { 'content-type': 'application/xml' });
  response.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${reason}</Message></Error>`);
}

export async function startLocalS3(options: { bucket?: string; region?: string } = {}): Promise<LocalS3> {
  const bucket = options.bucket ?? 'svc-catalog';
  const region = options.region ?? 'us-east-1';
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-s3-'));
  const s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port: backendPort } = (await s3rver.run()) as AddressInfo;
  const requests: LocalS3['requests'] = [];
  const refused: LocalS3['refused'] = [];
  const local = { failWhen: undefined as LocalS3['failWhen'] };

  const front = createServer((incoming, response) => {
    const url = incoming.url ?? '/';
    const problem = sigV4Problem({ method: incoming.method ?? 'GET', url, headers: incoming.headers }, SECRET_ACCESS_KEY);
    const [pathname] = url.split('?', 1) as [string];
    if (problem) {
      refused.push({ method: incoming.method ?? 'GET', path: pathname, reason: problem });
      incoming.resume();
      refuse(response, problem);
      return;
    }
    const query = new URL(url, 'http://s3').searchParams;
    requests.push({ method: incoming.method ?? 'GET', path: pathname, query: [...query.keys()] });
    if (local.failWhen?.({ method: incoming.method ?? 'GET', path: pathname, query })) {
      incoming.resume();
      response.writeHead(500, { 'content-type': 'application/xml' });
      response.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>failed by the test</Message></Error>');
      return;
    }
    const forwarded = httpRequest({ host: '127.0.0.1', port: backendPort, method: incoming.method, path: url, headers: incoming.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    forwarded.on('error', (error) => response.destroy(error));
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const { port } = front.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    bucket,
    region,
    accessKeyId: ACCESS_KEY_ID,
    secretAccessKey: SECRET_ACCESS_KEY,
    requests,
    refused,
    get failWhen() {
      return local.failWhen;
    },
    set failWhen(predicate) {
      local.failWhen = predicate;
    },
    async close() {
      front.closeAllConnections();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      await s3rver.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
