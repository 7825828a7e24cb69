import type { Context, Middleware, Next } from 'koa';
import { CONSOLE_PATH } from '@svc/schemas';
import type { ConsoleFile } from './console-files.ts';

/** Fingerprinted assets never change under their name: a year, and no revalidation. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';
/** index.html names the current assets, so it is never kept: a new build is seen at once. */
const INDEX_CACHE = 'no-store';

/**
 * The console's Content-Security-Policy: scripts and styles only from the console's own files
 * (no inline script, no eval), calls only to its own origin and the api surface's, and no page
 * may frame it. Caller-supplied strings are rendered as text, so this is the second wall.
 */
export function consoleContentSecurityPolicy(apiOrigin: string | undefined): string {
  const connect = ["'self'", ...(apiOrigin ? [apiOrigin] : [])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${connect}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    "manifest-src 'self'",
  ].join('; ');
}

export interface ConsoleServingOptions {
  /** The built files by path under /ui/, or undefined when this checkout has not built the console. */
  files: ReadonlyMap<string, ConsoleFile> | undefined;
  /** The public URLs now (the api surface may have its own origin, allowed in connect-src). */
  publicUrls: () => { baseUrl: string; apiUrl: string };
}

const originOf = (url: string) => new URL(url).origin;

/**
 * Serves the console at /ui/ ahead of the contract: `/ui/assets/<hashed name>` from the build,
 * every other path under /ui/ the single page (its router reads the path). Anything else, other
 * methods, and unknown assets go on to the contract app, which answers its JSON 404 or 405.
 */
export function serveConsole(options: ConsoleServingOptions): Middleware {
  let policyFor: { apiUrl: string; policy: string } | undefined;
  const policy = () => {
    const { baseUrl, apiUrl } = options.publicUrls();
    if (policyFor?.apiUrl !== apiUrl) {
      const apiOrigin = originOf(apiUrl) === originOf(baseUrl) ? undefined : originOf(apiUrl);
      policyFor = { apiUrl, policy: consoleContentSecurityPolicy(apiOrigin) };
    }
    return policyFor.policy;
  };
  return async function serveConsoleFiles(ctx: Context, next: Next): Promise<void> {
    const { path } = ctx;
    if (!(path === '/ui' || path.startsWith(CONSOLE_PATH)) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    if (path === '/ui') {
      ctx.status = 308;
      ctx.set('location', CONSOLE_PATH);
      return;
    }
    if (!options.files) {
      ctx.status = 503;
      ctx.set('cache-control', 'no-store');
      ctx.body = { error: 'The web console is not built in this checkout: run `pnpm build` (or set SVC_UI=off).', code: 'console_not_built' };
      return;
    }
    const relative = path.slice(CONSOLE_PATH.length);
    const isAsset = relative.startsWith('assets/');
    const file = options.files.get(isAsset ? relative : 'index.html');
    if (!file) return next();
    ctx.set('content-security-policy', policy());
    ctx.set('x-content-type-options', 'nosniff');
    ctx.set('referrer-policy', 'no-referrer');
    ctx.set('x-frame-options', 'DENY');
    ctx.set('cross-origin-opener-policy', 'same-origin');
    ctx.set('cache-control', isAsset ? ASSET_CACHE : INDEX_CACHE);
    ctx.set('etag', file.etag);
    ctx.vary('accept-encoding');
    if (isAsset && ctx.get('if-none-match') === file.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = file.contentType;
    if (file.gzipped && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('content-encoding', 'gzip');
      ctx.body = file.gzipped;
    } else {
      ctx.body = file.body;
    }
  };
}
