import { baseMcpEndpointUrl, mcpEndpointUrl, type Principal } from '@svc/schemas';

/**
 * RFC 8707 resource indicators: which URLs a token may be bound to, and whether a bound token may
 * be used at a given endpoint.
 */

/**
 * The form two resource URLs are compared in: the WHATWG serialisation (lower-case scheme and
 * host, default port dropped), without the lone `/` of an empty path, because clients differ
 * there (`new URL('https://h').href` is `https://h/`, the base URL svc publishes has no slash).
 * Undefined for a value that is not an absolute URL or that has a fragment (RFC 8707 2).
 */
export function canonicalResource(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.hash || value.includes('#')) return undefined;
  const href = url.href;
  return url.pathname === '/' && !url.search ? href.slice(0, -1) : href;
}

/** The resources svc serves: its REST API (the base URL), the base-surface MCP endpoint and the blackboard's. */
export function svcResources(urls: { baseUrl: string; apiUrl: string }): string[] {
  return [urls.baseUrl, baseMcpEndpointUrl(urls.baseUrl), mcpEndpointUrl(urls.apiUrl)];
}

/** svc's own spelling of the requested resource, or undefined when it is not one svc serves. */
export function matchResource(requested: string, urls: { baseUrl: string; apiUrl: string }): string | undefined {
  const wanted = canonicalResource(requested);
  if (wanted === undefined) return undefined;
  return svcResources(urls).find((resource) => canonicalResource(resource) === wanted);
}

/**
 * Whether the caller's credential may be used at `resourceUrl` (RFC 8707 audience check). An OAuth
 * access token bound to a resource is accepted only there; a token issued without `resource`, and
 * every other credential (developer key, demo token, operator, none), is accepted everywhere, as
 * before resource indicators existed. The MCP endpoint calls this with its own URL and answers
 * 401 `invalid_token` when it is false.
 */
export function acceptsResource(principal: Principal, resourceUrl: string): boolean {
  if (principal.resource === undefined) return true;
  const bound = canonicalResource(principal.resource);
  return bound !== undefined && bound === canonicalResource(resourceUrl);
}
