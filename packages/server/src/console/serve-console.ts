import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Context, Middleware, Next } from 'koa';
import { CONSOLE_PATH } from '@svc/schemas';
import type { ContractDispatch } from '../http/dispatch.ts';
import type { HttpMetrics } from '../observability/metrics.ts';
import type { ConsoleFile } from './console-files.ts';
import { firstLoadBlock, firstLoadReads, readFirstLoad } from './first-load.ts';
import type { FirstPaint } from './first-paint.ts';
import { inlineStylesheets } from './inline-stylesheet.ts';
import { pagePreloads } from './page-preloads.ts';

const gzipAsync = promisify(gzip);
/** Where the page's first-load answers go: right after the element the app mounts in, before the module script runs. */
const APP_ELEMENT = '<div id="app"></div>';
/** The static "loading…" line (index.html), which a public page's first paint takes the place of. */
const BOOT_LINE = /<p id="boot"[^>]*>[^<]*<\/p>/;
/** index.html's note for a browser without scripts; a page drawn by the server reads without them, so it goes. */
const NO_SCRIPT_NOTE = /<noscript>.*?<\/noscript>/s;

/** Fingerprinted assets never change under their name: a year, and no revalidation. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';
/** index.html names the current assets, so it is never kept: a new build is seen at once. */
const INDEX_CACHE = 'no-store';

/**
 * The console's Content-Security-Policy: scripts and styles only from the console's own files
 * (no inline script, no eval; the one inline style is the console's stylesheet, by its hash), calls only to its own origin and the api surface's, and no page
 * may frame it. Caller-supplied strings are rendered as text, so this is the second wall.
 */
export function consoleContentSecurityPolicy(apiOrigin: string | undefined, styleSources: readonly string[] = []): string {
  const connect = ["'self'", ...(apiOrigin ? [apiOrigin] : [])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    // The page's own stylesheet written into it (inline-stylesheet.ts), allowed by its hash: no other inline style.
    ["style-src 'self'", ...styleSources].join(' '),
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
  /** Where the console's answers are counted, as the contract's routes are (svc_http_requests_total in /v1/metrics). */
  metrics?: HttpMetrics;
  /**
   * The contract's routes in process: a public page (the board, a channel, a thread, an artifact)
   * is answered with the reads its first render makes inlined (first-load.ts), so its content is
   * on screen without a further request. Without it, every page is the static file.
   */
  dispatch?: ContractDispatch;
  /**
   * The server's first paint of a public page (first-paint.ts): its content drawn as HTML from
   * the same answers, in a worker thread under a deadline, so it is on screen before any script
   * runs, and without scripts at all.
   */
  firstPaint?: FirstPaint;
}

/**
 * The console's answers are counted by route, never by path (a path is chosen by the caller: one
 * series each would let anyone grow the metrics without bound): its fingerprinted files are
 * `console.asset`, and every page of the single-page application (and the /ui redirect) `console.page`.
 */
export const CONSOLE_ROUTES = { asset: 'console.asset', page: 'console.page' } as const;

const originOf = (url: string) => new URL(url).origin;

/**
 * Serves the console at /ui/ ahead of the contract: `/ui/assets/<hashed name>` from the build,
 * every other path under /ui/ the single page (its router reads the path). Anything else, other
 * methods, and unknown assets go on to the contract app, which answers its JSON 404 or 405.
 */
export function serveConsole(options: ConsoleServingOptions): Middleware {
  const { files, styleSources } = options.files ? inlineStylesheets(options.files) : { files: undefined, styleSources: [] };
  const preloads = files ? pagePreloads(files) : new Map<string, string>();
  let policyFor: { apiUrl: string; policy: string } | undefined;
  const policy = () => {
    const { baseUrl, apiUrl } = options.publicUrls();
    if (policyFor?.apiUrl !== apiUrl) {
      const apiOrigin = originOf(apiUrl) === originOf(baseUrl) ? undefined : originOf(apiUrl);
      policyFor = { apiUrl, policy: consoleContentSecurityPolicy(apiOrigin, styleSources) };
    }
    return policyFor.policy;
  };
  const serve = async (ctx: Context, next: Next): Promise<string | undefined> => {
    const { path } = ctx;
    if (path === '/' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      // The root is JSON for agents and the console for a person: a browser's Accept prefers
      // text/html, an agent's (JSON, */*, or none) does not, and keeps the self-description.
      ctx.vary('accept');
      if (ctx.get('accept') && ctx.accepts('application/json', 'text/html') === 'text/html') {
        ctx.status = 302;
        ctx.set('location', CONSOLE_PATH);
        ctx.set('cache-control', 'no-store');
        return CONSOLE_ROUTES.page;
      }
      await next();
      return undefined;
    }
    if (!(path === '/ui' || path.startsWith(CONSOLE_PATH)) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) {
      await next();
      return undefined;
    }
    if (path === '/ui') {
      ctx.status = 308;
      ctx.set('location', CONSOLE_PATH);
      return CONSOLE_ROUTES.page;
    }
    if (!files) {
      ctx.status = 503;
      ctx.set('cache-control', 'no-store');
      ctx.body = { error: 'The web console is not built in this checkout: run `pnpm build` (or set SVC_UI=off).', code: 'console_not_built' };
      return CONSOLE_ROUTES.page;
    }
    const relative = path.slice(CONSOLE_PATH.length);
    const isAsset = relative.startsWith('assets/');
    const file = files.get(isAsset ? relative : 'index.html');
    // An unknown asset goes on to the contract app's JSON 404, counted there.
    if (!file) {
      await next();
      return undefined;
    }
    const route = isAsset ? CONSOLE_ROUTES.asset : CONSOLE_ROUTES.page;
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
      return route;
    }
    ctx.type = file.contentType;
    const reads = !isAsset && ctx.method === 'GET' && options.dispatch ? firstLoadReads(relative, new URLSearchParams(ctx.querystring)) : [];
    if (reads.length > 0) {
      // The page holds this request's data: no ETag (it names the file, not this answer), compressed here.
      ctx.remove('etag');
      const query = new URLSearchParams(ctx.querystring);
      const firstLoad = await readFirstLoad(options.dispatch!, reads, ctx.ip);
      const painted = await options.firstPaint?.draw(relative, query, firstLoad.byName);
      let page = file.body
        .toString('utf8')
        .replace('</head>', `${preloads.get(relative) ?? ''}</head>`)
        .replace(APP_ELEMENT, `${APP_ELEMENT}${firstLoadBlock(firstLoad.answers)}`);
      // A function as the replacement: the HTML is inserted as it is, its `$` never read as a pattern.
      if (painted) page = page.replace(BOOT_LINE, () => painted).replace(NO_SCRIPT_NOTE, '');
      const html = Buffer.from(page);
      if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
        ctx.set('content-encoding', 'gzip');
        ctx.body = await gzipAsync(html);
      } else {
        ctx.body = html;
      }
      return route;
    }
    if (file.gzipped && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('content-encoding', 'gzip');
      ctx.body = file.gzipped;
    } else {
      ctx.body = file.body;
    }
    return route;
  };
  const { metrics } = options;
  if (!metrics) return async (ctx, next) => void (await serve(ctx, next));
  return async function serveConsoleFiles(ctx: Context, next: Next): Promise<void> {
    const startedAt = performance.now();
    const route = await serve(ctx, next);
    if (route) metrics.observe(route, ctx.method, ctx.status, (performance.now() - startedAt) / 1000);
  };
}
