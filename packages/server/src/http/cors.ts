import type { Context } from 'koa';
import type { RouteDefinition } from '@svc/schemas';
import { ServiceError } from '../service-error.ts';

/**
 * Who may read answers from a browser on another origin. Decided per route, not by accident:
 * public discovery documents are readable from any origin; everything else only from the origins
 * listed in SVC_CORS_ORIGINS (`*` there opens every route). Credentials travel in the
 * Authorization header, never in cookies, so no `Access-Control-Allow-Credentials` is sent.
 */
export interface CorsPolicy {
  /** Exact origins (`https://app.example`), lower-cased. */
  readonly origins: ReadonlySet<string>;
  /** `*` in SVC_CORS_ORIGINS: every origin, every route. */
  readonly anyOrigin: boolean;
  /**
   * One more origin allowed without configuration, read per request: the web console's own
   * (the base surface's public origin), which calls the api surface when that has its own port.
   */
  readonly consoleOrigin?: () => string | undefined;
}

/** Headers a browser script may read besides the safelisted ones: what svc's clients rely on. */
const EXPOSED_HEADERS =
  'x-request-id, retry-after, location, www-authenticate, x-svc-completion-token, x-svc-sha256, x-svc-size-bytes, server-timing, x-svc-latency-ms';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/** A public GET document meant for discovery: flagged in the contract, or anything under /.well-known/. */
export function isDiscoveryDocument(route: RouteDefinition): boolean {
  return route.auth.kind === 'public' && route.method === 'GET' && (route.cors === 'any-origin' || route.path.startsWith('/.well-known/'));
}

/** The Access-Control-Allow-Origin value for this origin on this route, or undefined (no CORS). */
export function allowedOrigin(policy: CorsPolicy, origin: string, route: RouteDefinition | undefined): string | undefined {
  if (route && isDiscoveryDocument(route)) return '*';
  const lowered = origin.toLowerCase();
  if (policy.anyOrigin || policy.origins.has(lowered) || policy.consoleOrigin?.() === lowered) return origin;
  return undefined;
}

/** Sets the CORS headers of an actual (non-preflight) answer. */
export function applyCors(ctx: Context, policy: CorsPolicy, origin: string, route: RouteDefinition | undefined): void {
  const allowed = allowedOrigin(policy, origin, route);
  // The answer differs by Origin unless it is `*`, so shared caches must key on it.
  if (allowed !== '*') ctx.vary('origin');
  if (allowed === undefined) return;
  ctx.set('access-control-allow-origin', allowed);
  ctx.set('access-control-expose-headers', EXPOSED_HEADERS);
}

/**
 * Answers a preflight for a route that exists under the requested method: 204 with what may be
 * sent, or 403 `cors_origin_refused` naming the setting to change.
 */
export function answerPreflight(ctx: Context, policy: CorsPolicy, origin: string, route: RouteDefinition, allowedMethods: readonly string[]): void {
  const allowed = allowedOrigin(policy, origin, route);
  if (allowed !== '*') ctx.vary('origin');
  if (allowed === undefined) {
    throw new ServiceError(
      'cors_origin_refused',
      `Origin ${origin} may not call ${route.method} ${ctx.path} from a browser; the operator can add it to SVC_CORS_ORIGINS.`,
    );
  }
  ctx.set('access-control-allow-origin', allowed);
  ctx.set('access-control-allow-methods', allowedMethods.join(', '));
  // Allowed origins are trusted callers: they may send whatever headers they ask for.
  const requested = ctx.get('access-control-request-headers');
  if (requested) ctx.set('access-control-allow-headers', requested);
  ctx.set('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS);
  ctx.status = 204;
}

/** Parses SVC_CORS_ORIGINS: `*`, or comma-separated origins such as `https://app.example,http://localhost:5173`. */
export function corsPolicyFrom(origins: readonly string[], consoleOrigin?: () => string | undefined): CorsPolicy {
  return {
    anyOrigin: origins.includes('*'),
    origins: new Set(origins.filter((origin) => origin !== '*').map((origin) => origin.toLowerCase())),
    ...(consoleOrigin ? { consoleOrigin } : {}),
  };
}
