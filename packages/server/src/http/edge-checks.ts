import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { BASE_MCP_ENDPOINT_PATH, MCP_ENDPOINT_PATH } from '@svc/schemas';
import { ServiceError } from '../service-error.ts';
import type { CorsPolicy } from './cors.ts';

/**
 * Refuses a request carrying two `Authorization` or two `Host` headers (400 `duplicate_header`).
 * Node keeps the first of each in `headers` and drops the rest silently, so a proxy that reads the
 * last one and svc would act on different credentials or hosts. `rawHeaders` holds every line as
 * sent; an in-process call (dispatch.ts) has none, its headers being a plain object.
 */
export function refuseDuplicateHeaders(request: IncomingMessage): void {
  const raw = request.rawHeaders as string[] | undefined;
  if (raw === undefined) return;
  let hosts = 0;
  let authorizations = 0;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    // Only the two names' lengths are lower-cased and compared: the hot path of every request.
    if (name.length === 4 && name.toLowerCase() === 'host') hosts += 1;
    else if (name.length === 13 && name.toLowerCase() === 'authorization') authorizations += 1;
  }
  if (hosts > 1 || authorizations > 1) {
    const name = hosts > 1 ? 'Host' : 'Authorization';
    throw new ServiceError('duplicate_header', `The request carries more than one ${name} header; send exactly one.`);
  }
}

/** The host a `Host` header names, lower-cased, without its port or a final dot; IPv6 literals keep their brackets. */
export function hostnameOf(host: string): string {
  const lowered = host.trim().toLowerCase();
  const name = lowered.startsWith('[') ? lowered.slice(0, lowered.indexOf(']') + 1) : lowered.split(':', 1)[0]!;
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An IP literal cannot be rebound (DNS rebinding needs a name the attacker's DNS answers), so any is allowed, as Vite's `allowedHosts` does. */
function isIpLiteral(hostname: string): boolean {
  return isIP(hostname) !== 0 || (hostname.startsWith('[') && isIP(hostname.slice(1, -1)) === 6);
}

/** Whether `hostname` is a loopback name: `localhost`, a name under `.localhost` (browsers resolve those themselves), 127.0.0.0/8 or ::1. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_NAMES.has(hostname) || hostname.endsWith('.localhost') || (isIP(hostname) === 4 && hostname.startsWith('127.'));
}

/**
 * The hosts svc answers, against DNS rebinding: a page on another site whose name resolves to
 * 127.0.0.1 reaches a local svc with its own name in `Host`. Checked when svc listens on a
 * loopback address, or whenever SVC_ALLOWED_HOSTS lists hosts; `*` there turns the check off.
 */
export interface HostPolicy {
  /** Whether the check runs at all. */
  readonly enforced: boolean;
  allows(host: string | undefined): boolean;
}

export function hostPolicyFrom(options: {
  listenHost: string;
  allowedHosts: readonly string[];
  publicUrls: () => { baseUrl: string; apiUrl: string };
}): HostPolicy {
  const anyHost = options.allowedHosts.includes('*');
  const listed = options.allowedHosts.filter((host) => host !== '*').map((host) => host.toLowerCase());
  const exact = new Set(listed.filter((host) => !host.startsWith('.')).map(hostnameOf));
  // `.example.com` allows example.com and every name under it, as in Vite.
  const suffixes = listed.filter((host) => host.startsWith('.'));
  const enforced = !anyHost && (listed.length > 0 || isLoopbackHost(hostnameOf(options.listenHost)) || options.listenHost === '::1');
  // The public URLs' hosts are read per request (their ports are known once svc listens), kept while they stay the same.
  let publicHosts: { key: string; hosts: ReadonlySet<string> } | undefined;
  const publicHostsNow = (): ReadonlySet<string> => {
    const { baseUrl, apiUrl } = options.publicUrls();
    const key = `${baseUrl} ${apiUrl}`;
    if (publicHosts?.key !== key) publicHosts = { key, hosts: new Set([new URL(baseUrl).hostname, new URL(apiUrl).hostname]) };
    return publicHosts.hosts;
  };
  return {
    enforced,
    allows(host) {
      // HTTP/1.0 without Host is no browser's request, and rebinding needs a browser.
      if (!enforced || host === undefined) return true;
      const name = hostnameOf(host);
      if (isLoopbackHost(name) || isIpLiteral(name) || exact.has(name) || publicHostsNow().has(name)) return true;
      return suffixes.some((suffix) => name === suffix.slice(1) || name.endsWith(suffix));
    },
  };
}

/** 403 `host_not_allowed` for a Host the policy refuses. */
export function refuseForeignHost(policy: HostPolicy, host: string | undefined): void {
  if (policy.allows(host)) return;
  throw new ServiceError(
    'host_not_allowed',
    `Host ${host} is not one of this server's names; the operator can add it to SVC_ALLOWED_HOSTS (or set SVC_PUBLIC_URL).`,
  );
}

/** Whether a path is one of svc's MCP endpoints, whose transport says servers MUST validate `Origin`. */
export function isMcpPath(path: string): boolean {
  return path === BASE_MCP_ENDPOINT_PATH || path === MCP_ENDPOINT_PATH;
}

/**
 * Refuses a browser's MCP request from a foreign origin (403 `origin_not_allowed`), on every MCP
 * revision: the origins of svc's public URLs, loopback origins and those in SVC_CORS_ORIGINS
 * pass. The MCP SDKs' clients send no `Origin`, so agents are not affected.
 */
export function refuseForeignMcpOrigin(origin: string, cors: CorsPolicy, publicUrls: () => { baseUrl: string; apiUrl: string }): void {
  const lowered = origin.toLowerCase();
  if (cors.anyOrigin || cors.origins.has(lowered)) return;
  let parsed: URL | undefined;
  try {
    parsed = new URL(lowered);
  } catch {
    // `null` (a sandboxed frame, a file: page) and anything unparsable are foreign.
  }
  if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:')) {
    if (isLoopbackHost(parsed.hostname)) return;
    const { baseUrl, apiUrl } = publicUrls();
    if (parsed.origin === new URL(baseUrl).origin || parsed.origin === new URL(apiUrl).origin) return;
  }
  throw new ServiceError(
    'origin_not_allowed',
    `Origin ${origin} may not call the MCP endpoint; the operator can add it to SVC_CORS_ORIGINS. MCP clients that are not browsers send no Origin.`,
  );
}
