import { match as compilePath, type MatchFunction } from 'path-to-regexp';
import type { RouteDefinition } from '@svc/schemas';

export interface RouteEntry<T> {
  id: string;
  route: RouteDefinition;
  value: T;
}

export interface RouteFound<T> {
  entry: RouteEntry<T>;
  params: Record<string, unknown>;
}

export type RouteMatch<T> = RouteFound<T> | { allowed: string[] } | undefined;

interface DynamicRoute<T> {
  entry: RouteEntry<T>;
  matches: MatchFunction<Partial<Record<string, string | string[]>>>;
  paramCount: number;
}

const paramCount = (path: string) => (path.match(/[:*][A-Za-z0-9_]+/g) ?? []).length;
const NO_PARAMS: Record<string, unknown> = Object.freeze({});

/**
 * Matches a method and path to a contract entry: static paths by two map lookups (method, then
 * path, answering one match object made at mount time), paths with parameters by their compiled
 * pattern, fewest parameters first (OpenAPI's rule: a concrete path wins over a templated one).
 * HEAD is served by GET routes. When the path exists under other methods the answer lists them,
 * for a 405 with `Allow`.
 */
export class RouteTable<T> {
  private readonly staticRoutes = new Map<string, Map<string, RouteFound<T>>>();
  private readonly dynamicRoutes = new Map<string, DynamicRoute<T>[]>();

  add(entry: RouteEntry<T>): void {
    const { method, path } = entry.route;
    if (paramCount(path) === 0) {
      let byPath = this.staticRoutes.get(method);
      if (!byPath) this.staticRoutes.set(method, (byPath = new Map()));
      const existing = byPath.get(path);
      if (existing) throw new Error(`Two contract entries answer ${method} ${path}: ${existing.entry.id} and ${entry.id}`);
      byPath.set(path, Object.freeze({ entry, params: NO_PARAMS }));
      return;
    }
    const list = this.dynamicRoutes.get(method) ?? [];
    list.push({ entry, matches: compilePath(path, { decode: decodeURIComponent }), paramCount: paramCount(path) });
    list.sort((a, b) => a.paramCount - b.paramCount);
    this.dynamicRoutes.set(method, list);
  }

  private find(method: string, path: string): RouteFound<T> | undefined {
    const exact = this.staticRoutes.get(method)?.get(path);
    if (exact) return exact;
    const candidates = this.dynamicRoutes.get(method);
    if (!candidates) return undefined;
    for (const candidate of candidates) {
      let result: ReturnType<typeof candidate.matches>;
      try {
        result = candidate.matches(path);
      } catch {
        // A malformed percent-escape cannot match any route.
        return undefined;
      }
      if (result) return { entry: candidate.entry, params: result.params };
    }
    return undefined;
  }

  match(method: string, path: string): RouteMatch<T> {
    const found = this.find(method, path) ?? (method === 'HEAD' ? this.find('GET', path) : undefined);
    if (found) return found;
    const allowed = this.methodsFor(path).filter((other) => other !== method);
    return allowed.length > 0 ? { allowed } : undefined;
  }

  /** Every method the path answers (HEAD wherever GET is). */
  methodsFor(path: string): string[] {
    return ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((method) => this.find(method === 'HEAD' ? 'GET' : method, path));
  }
}
