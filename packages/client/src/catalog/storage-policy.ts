/**
 * Where a verified download may fetch bytes from. Strict by default: HTTPS on
 * `storage.googleapis.com` and its subdomains only. Self-hosting adds hosts explicitly, and a
 * plain-HTTP store is accepted only on a loopback address, only when asked.
 */
export interface StoragePolicy {
  /** Extra allowed hosts, `host` or `host:port` (exact match; a port-less entry means the default port). */
  hosts?: string[];
  /** Accept `http://` for an allowed host that is a loopback address (127.0.0.0/8, ::1, localhost). */
  allowHttpLoopback?: boolean;
  /**
   * When the API URL itself is a loopback URL (a self-hosted svc on this machine), trust that
   * same origin's built-in store (`/api/storage/`), plain HTTP included (default true). Every
   * other host keeps the strict policy. Set false to require `hosts` even then.
   */
  trustLoopbackServerStore?: boolean;
}

/** The policy with every default applied; `serverStore` is the trusted loopback store prefix, if any. */
export interface ResolvedStoragePolicy {
  hosts: string[];
  allowHttpLoopback: boolean;
  serverStore: string | undefined;
}

/** Path prefix of the server's built-in object store (the contract's storageObject route). */
export const SERVER_STORE_PATH = '/api/storage/';

export const DEFAULT_STORAGE_HOST = 'storage.googleapis.com';
export const MAX_SIGNED_URL_EXPIRES_SECONDS = 300;
/** Query fields a V4 signed URL must carry (compared case-insensitively: GCS writes `X-Goog-*`). */
export const REQUIRED_SIGNED_FIELDS = [
  'x-goog-algorithm',
  'x-goog-credential',
  'x-goog-date',
  'x-goog-expires',
  'x-goog-signedheaders',
  'x-goog-signature',
  'generation',
] as const;
/** The same for an S3 (SigV4) presigned URL, which svc's S3 store also signs `generation` into. */
export const REQUIRED_S3_SIGNED_FIELDS = [
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-signedheaders',
  'x-amz-signature',
  'generation',
] as const;

/**
 * Hosts from `SVC_STORAGE_HOSTS` (comma-separated) added to the policy's own; with a loopback
 * `apiUrl`, that origin's built-in store is trusted unless `trustLoopbackServerStore` is false.
 */
export function resolveStoragePolicy(
  policy: StoragePolicy | undefined,
  env: Record<string, string | undefined> = typeof process !== 'undefined' ? process.env : {},
  apiUrl?: string,
): ResolvedStoragePolicy {
  const fromEnv = (env.SVC_STORAGE_HOSTS ?? '')
    .split(',')
    .map((host) => host.trim())
    .filter(Boolean);
  return {
    hosts: [...new Set([...(policy?.hosts ?? []), ...fromEnv].map((host) => host.toLowerCase()))],
    allowHttpLoopback: policy?.allowHttpLoopback ?? false,
    serverStore: policy?.trustLoopbackServerStore === false || !apiUrl ? undefined : loopbackServerStore(apiUrl),
  };
}

/** `http://127.0.0.1:8787/api/storage/` for a loopback API URL; undefined for any other. */
export function loopbackServerStore(apiUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    return undefined;
  }
  if (!['http:', 'https:'].includes(url.protocol) || !isLoopback(url.hostname) || url.username || url.password) return undefined;
  return `${url.origin}${SERVER_STORE_PATH}`;
}

export function isLoopback(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

export type PolicyProblem = {
  check: 'location' | 'storage-scheme' | 'storage-host' | 'storage-userinfo' | 'storage-fragment' | 'signed-url-field' | 'signed-url-expires';
  message: string;
  expected: string;
  actual: string;
};

const defaultPort = (protocol: string) => (protocol === 'https:' ? '443' : protocol === 'http:' ? '80' : '');

function hostAllowed(url: URL, policy: ResolvedStoragePolicy): boolean {
  const hostname = url.hostname.toLowerCase();
  const port = url.port || defaultPort(url.protocol);
  const isDefaultPort = url.port === '';
  if ((hostname === DEFAULT_STORAGE_HOST || hostname.endsWith(`.${DEFAULT_STORAGE_HOST}`)) && isDefaultPort) return true;
  return policy.hosts.some((entry) => {
    const parsed = new URL(`http://${entry}`);
    const entryPort = parsed.port || undefined;
    return parsed.hostname.toLowerCase() === hostname && (entryPort ? entryPort === port : isDefaultPort);
  });
}

/** Checks a redirect target against the policy and the signed-URL fields; null when it passes. */
export function checkStorageUrl(location: string, policy: ResolvedStoragePolicy): PolicyProblem | null {
  const allowedText = [
    `https://${DEFAULT_STORAGE_HOST} or https://*.${DEFAULT_STORAGE_HOST}`,
    ...policy.hosts.map((host) => `${policy.allowHttpLoopback && isLoopback(new URL(`http://${host}`).hostname) ? 'http(s)' : 'https'}://${host}`),
    ...(policy.serverStore ? [`${policy.serverStore}*`] : []),
  ].join(', ');
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return {
      check: 'location',
      message: 'the Location header is not an absolute URL',
      expected: 'an absolute https URL',
      actual: JSON.stringify(location.slice(0, 200)),
    };
  }
  if (url.username || url.password)
    return {
      check: 'storage-userinfo',
      message: 'the signed URL carries credentials',
      expected: 'no user:password in the URL',
      actual: `${url.username}${url.password ? ':***' : ''}@`,
    };
  if (location.includes('#')) return { check: 'storage-fragment', message: 'the signed URL has a fragment', expected: 'no #fragment', actual: url.hash || '#' };
  // The loopback server's own store: same origin as the API, its storage path, and nothing else.
  const ownStore = policy.serverStore !== undefined && `${url.origin}${url.pathname}`.startsWith(policy.serverStore);
  if (!ownStore && !hostAllowed(url, policy))
    return {
      check: 'storage-host',
      message: `host ${url.host} is not an allowed object-storage host (add it with storagePolicy.hosts, --storage-host or SVC_STORAGE_HOSTS if you trust it)`,
      expected: allowedText,
      actual: url.host,
    };
  if (url.protocol !== 'https:' && !ownStore) {
    const loopbackHttp = url.protocol === 'http:' && policy.allowHttpLoopback && isLoopback(url.hostname);
    if (!loopbackHttp) {
      return {
        check: 'storage-scheme',
        message:
          url.protocol === 'http:' && isLoopback(url.hostname)
            ? 'plain HTTP to a loopback store needs allowHttpLoopback (--allow-http-loopback)'
            : 'the signed URL is not HTTPS',
        expected: 'https:',
        actual: url.protocol,
      };
    }
  }
  const query = new Map<string, string>();
  for (const [name, value] of url.searchParams) query.set(name.toLowerCase(), value);
  // An X-Amz-Algorithm says the URL is SigV4 (S3); every other URL is held to the GCS V4 fields.
  const s3 = query.has('x-amz-algorithm');
  const required = s3 ? REQUIRED_S3_SIGNED_FIELDS : REQUIRED_SIGNED_FIELDS;
  const missing = required.filter((name) => !query.get(name));
  if (missing.length)
    return {
      check: 'signed-url-field',
      message: `the signed URL lacks ${missing.join(', ')}`,
      expected: required.join(', '),
      actual: [...query.keys()].join(', ') || 'no query fields',
    };
  const expiresField = s3 ? 'x-amz-expires' : 'x-goog-expires';
  const expires = query.get(expiresField)!;
  if (!/^\d+$/.test(expires) || Number(expires) < 1 || Number(expires) > MAX_SIGNED_URL_EXPIRES_SECONDS) {
    return {
      check: 'signed-url-expires',
      message: `${expiresField} is out of range`,
      expected: `an integer in 1..${MAX_SIGNED_URL_EXPIRES_SECONDS}`,
      actual: expires,
    };
  }
  return null;
}
