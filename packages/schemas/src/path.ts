import type { z } from 'zod';
import type { RouteDefinition } from './route.ts';

/**
 * Fills `:name` and `*name` placeholders of a path template. Values are encoded; `*` values keep
 * their slashes but every segment is encoded. A `.` or `..` segment is refused so a value can
 * never climb out of the path the contract declares.
 */
export function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/([:*])([A-Za-z0-9_]+)/g, (_match, kind: string, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null || value === '') throw new TypeError(`Missing path parameter "${name}" for ${template}`);
    const segments = kind === '*' ? String(value).split('/') : [String(value)];
    for (const segment of segments) {
      if (segment === '.' || segment === '..') throw new TypeError(`Path parameter "${name}" may not contain "." or ".." segments`);
    }
    return segments.map(encodeURIComponent).join('/');
  });
}

/**
 * A route's query string as svc's callers write it (the client, the in-process dispatch of /mcp
 * tools and A2A skills): undefined, null and empty values are left out, arrays repeat the key,
 * objects are JSON. Answers `?...`, or '' when nothing is left.
 */
export function toSearchParams(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const item of value) search.append(key, String(item));
    else if (typeof value === 'object') search.append(key, JSON.stringify(value));
    else search.append(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** The params a route's path takes, typed from its params schema; none when it has no schema. */
export type PathParams<R extends RouteDefinition> = R extends { params: infer S extends z.ZodType } ? [params: z.input<S>] : [];

/**
 * A route's absolute URL: its path under the public root of its surface (`apiUrl` for the api
 * surface, `baseUrl` for the base one), for links in documents and answers.
 */
export function urlFor<R extends RouteDefinition>(roots: { baseUrl: string; apiUrl: string }, route: R, ...params: PathParams<R>): string {
  return `${route.surface === 'api' ? roots.apiUrl : roots.baseUrl}${pathFor(route, ...params)}`;
}

/** A route without params has one path, its template itself, and keeps that literal type. */
export type PathOf<R extends RouteDefinition> = R extends { params: z.ZodType } ? string : R['path'];

/**
 * The path of one call of a route, from its contract entry: a server's `Location` header, a link
 * in a document, the client's URL. Nobody writes `/v1/jobs/${id}` by hand, so a path changes in
 * one place.
 *
 * @example
 * ```ts
 * pathFor(jobsContract.get, { job_id: row.id }); // '/v1/jobs/job_abc'
 * pathFor(inferenceContract.rerank); // '/v1/rerank'
 * ```
 */
export function pathFor<R extends RouteDefinition>(route: R, ...params: PathParams<R>): PathOf<R> {
  return fillPath(route.path, (params as unknown[])[0] as Record<string, unknown> | undefined) as PathOf<R>;
}
