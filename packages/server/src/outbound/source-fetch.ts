import { lookup } from 'node:dns/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ServiceError } from '../service-error.ts';
import { isAddressLiteral, publicAddress } from './public-address.ts';

export type ResolvedAddress = { address: string; family: number };

/**
 * A test seam, given to `createServer` in code (never read from the environment): it lets a test
 * fetch from its own HTTPS server on loopback. Production passes none of it and gets the system
 * resolver, the system's trusted CAs and no exemption from the address refusal.
 */
export interface SourceFetchSeam {
  /** Resolves a host name instead of the system resolver (all its addresses). */
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** The only certificate authority trusted (PEM): the test server's self-signed certificate. */
  ca?: string;
  /** Exact addresses exempt from the refusal: the test server's own loopback address, nothing wider. */
  allowAddresses?: readonly string[];
}

const systemLookup = (host: string): Promise<ResolvedAddress[]> => lookup(host, { all: true, verbatim: true });

/**
 * Resolves the host and answers one address that may be fetched, or throws `source_url_refused`.
 * Every address of the name must be public, not only the first: a name answering one public and
 * one private address would otherwise reach the private one on a later connection or retry.
 */
export async function vettedAddress(hostname: string, seam: SourceFetchSeam): Promise<ResolvedAddress> {
  const host = hostname.replace(/^\[|\]$/g, '');
  let addresses: ResolvedAddress[];
  try {
    addresses = isAddressLiteral(host) ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await (seam.lookup ?? systemLookup)(host);
  } catch {
    throw new ServiceError('source_fetch_failed', `The host ${hostname} does not resolve.`);
  }
  const vetted: ResolvedAddress[] = [];
  for (const entry of addresses) {
    const allowed = seam.allowAddresses?.includes(entry.address) ? entry : publicAddress(entry.address);
    if (!allowed)
      throw new ServiceError(
        'source_url_refused',
        `The URL's host resolves to an address that is not public unicast (${entry.address}); only public https hosts are fetched.`,
      );
    vetted.push(allowed);
  }
  if (vetted.length === 0) throw new ServiceError('source_url_refused', `The host ${hostname} resolves to no address.`);
  return vetted[0]!;
}

/**
 * The refusal that needs no lookup: a URL whose host is an address literal that is not public
 * (`https://[fec0::1]/x.pdf`). A route checks it before it takes a place in a queue, so the cheap,
 * certain 422 comes before a busy queue's 503; a host name is still judged by `vettedAddress`
 * when the URL is fetched.
 */
export function refuseUnfetchableLiteral(url: string, seam: SourceFetchSeam = {}): void {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (!isAddressLiteral(host) || seam.allowAddresses?.includes(host)) return;
  if (!publicAddress(host))
    throw new ServiceError('source_url_refused', `The URL's host is an address that is not public unicast (${host}); only public https hosts are fetched.`);
}

/** A `lookup` for node:https that answers only the vetted address, so no second DNS answer can swap in another. */
export function pinnedLookup(target: ResolvedAddress) {
  return (_hostname: string, options: unknown, callback: (error: null, address: string | ResolvedAddress[], family?: number) => void) => {
    if ((options as { all?: boolean }).all) callback(null, [target]);
    else callback(null, target.address, target.family);
  };
}

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
  signal?: AbortSignal;
  /** 0: a redirect is refused rather than followed. Default 3. */
  maxRedirects?: number;
  /** The Accept header; default: a PDF, or anything. */
  accept?: string;
  /** The User-Agent header; default `svc-pdf-fetch`. */
  userAgent?: string;
  /** Conditional request headers (`if-none-match`, `if-modified-since`) of a cache revalidating its copy. */
  conditional?: { 'if-none-match'?: string; 'if-modified-since'?: string };
}

/** A fetched body with the final answer's headers (for a caller that caches by them). */
export interface FetchedResponse {
  /** 304 only for a conditional request whose copy is still good; the body is then empty. */
  status: 200 | 304;
  body: Buffer;
  headers: IncomingHttpHeaders;
  /** The URL that answered (after redirects). */
  url: string;
}

/**
 * Fetches an https URL under a byte cap and a deadline. The connection goes to the address that
 * was checked (no second DNS answer can swap in a private one), and each redirect is checked again.
 * The deadline is one for the whole download: each hop (its lookup, connection, headers and body)
 * gets only what the earlier hops left, or a chain of slow redirects would outlive it hop by hop.
 */
export async function fetchPublicHttps(url: string, limits: FetchLimits, seam: SourceFetchSeam = {}): Promise<Buffer> {
  return (await fetchPublicHttpsResponse(url, limits, seam)).body;
}

/** `fetchPublicHttps`, answering the headers beside the body. */
export async function fetchPublicHttpsResponse(url: string, limits: FetchLimits, seam: SourceFetchSeam = {}): Promise<FetchedResponse> {
  const deadlineAt = performance.now() + limits.timeoutMs;
  const remaining = () => {
    const left = deadlineAt - performance.now();
    if (left <= 0) throw missedDeadline(limits.timeoutMs);
    return left;
  };
  let current = new URL(url);
  for (let hop = 0; hop <= (limits.maxRedirects ?? 3); hop += 1) {
    if (current.protocol !== 'https:') throw new ServiceError('source_url_refused', 'Only https URLs are fetched (a redirect led elsewhere).');
    const target = await beforeDeadline(vettedAddress(current.hostname, seam), remaining(), limits.timeoutMs);
    const answer = await getOnce(current, target, { ...limits, remainingMs: remaining() }, seam.ca);
    if (answer.kind === 'body') return { status: answer.status, body: answer.body, headers: answer.headers, url: current.href };
    if (limits.maxRedirects === 0) throw new ServiceError('source_fetch_failed', 'The URL answered with a redirect, and redirects are not followed here.');
    current = new URL(answer.location, current);
  }
  throw new ServiceError('source_fetch_failed', 'Too many redirects.');
}

const missedDeadline = (timeoutMs: number) => new ServiceError('source_fetch_failed', `The URL could not be fetched (no answer within ${timeoutMs / 1000} s).`);

/** A DNS lookup cannot be cancelled; the download stops waiting for it at the deadline. */
async function beforeDeadline<T>(work: Promise<T>, remainingMs: number, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(missedDeadline(timeoutMs)), remainingMs);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function getOnce(
  url: URL,
  target: ResolvedAddress,
  limits: FetchLimits & { remainingMs: number },
  ca: string | undefined,
): Promise<{ kind: 'body'; status: 200 | 304; body: Buffer; headers: IncomingHttpHeaders } | { kind: 'redirect'; location: string }> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      url,
      {
        method: 'GET',
        headers: { accept: limits.accept ?? 'application/pdf, */*;q=0.5', 'user-agent': limits.userAgent ?? 'svc-pdf-fetch', ...limits.conditional },
        lookup: pinnedLookup(target),
        timeout: limits.remainingMs,
        signal: limits.signal,
        ...(ca === undefined ? {} : { ca }),
      },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status >= 300 && status < 400 && response.headers.location) {
          response.resume();
          return resolve({ kind: 'redirect', location: response.headers.location });
        }
        if (status === 304 && limits.conditional) {
          response.resume();
          return resolve({ kind: 'body', status: 304, body: Buffer.alloc(0), headers: response.headers });
        }
        if (status !== 200) {
          response.resume();
          return reject(new ServiceError('source_fetch_failed', `The URL answered HTTP ${status}.`));
        }
        const declared = Number(response.headers['content-length'] ?? 0);
        if (declared > limits.maxBytes) {
          response.destroy();
          return reject(new ServiceError('payload_too_large', `The document at the URL is ${declared} bytes; at most ${limits.maxBytes} are taken.`));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > limits.maxBytes) {
            response.destroy();
            reject(new ServiceError('payload_too_large', `The document at the URL is over ${limits.maxBytes} bytes, the most taken.`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => resolve({ kind: 'body', status: 200, body: Buffer.concat(chunks), headers: response.headers }));
        response.on('error', () => reject(new ServiceError('source_fetch_failed', 'The download broke off.')));
      },
    );
    const deadline = setTimeout(() => request.destroy(new Error('deadline')), limits.remainingMs);
    request.on('close', () => clearTimeout(deadline));
    request.on('timeout', () => request.destroy(new Error('deadline')));
    request.on('error', (error) => {
      clearTimeout(deadline);
      if (error instanceof ServiceError) reject(error);
      else
        reject(
          error.message === 'deadline'
            ? missedDeadline(limits.timeoutMs)
            : new ServiceError('source_fetch_failed', 'The URL could not be fetched (connection failed).'),
        );
    });
    request.end();
  });
}
