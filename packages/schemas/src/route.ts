import type { z } from 'zod';
import type { PrincipalKind, Scope } from './principal.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

/** `base` serves /v1, /oauth, discovery; `api` serves /api/* (blackboard, catalog). */
export type Surface = 'base' | 'api';

/**
 * Who may call a route. The server's contract adapter enforces it; a handler never checks by hand.
 * - `public`: anyone. A recognised credential still resolves to its principal; an unknown bearer
 *   is not an error (the blackboard only hashes it).
 * - `scoped`: an authenticated principal holding every listed scope (the operator holds all).
 *   `principals` narrows which principal kinds are served.
 * - `bearer`: a bearer token (never a developer key) of one of the listed principal kinds.
 */
export type AuthRequirement =
  | { readonly kind: 'public' }
  | { readonly kind: 'scoped'; readonly scopes: readonly Scope[]; readonly principals?: readonly PrincipalKind[] }
  | { readonly kind: 'bearer'; readonly principals: readonly PrincipalKind[] };

/** How the request body travels. `bytes` hands the handler a Buffer read under the byte cap. */
export type BodyEncoding = 'json' | 'form' | 'bytes';

export type ResponseSpec =
  | z.ZodType
  | { readonly kind: 'text'; readonly contentType: string }
  | { readonly kind: 'bytes'; readonly contentType: string }
  | { readonly kind: 'sse'; readonly event: z.ZodType }
  | { readonly kind: 'json-or-sse'; readonly json: z.ZodType; readonly event: z.ZodType }
  | { readonly kind: 'json-or-bytes'; readonly json: z.ZodType; readonly contentType: string }
  | { readonly kind: 'redirect' }
  | { readonly kind: 'empty' };

/**
 * How a list route pages, declared once in its contract entry; the client derives `.all()` and
 * `.pages()` from it. A walk ends when the cursor is null or absent, or when `hasMore` is false.
 */
export interface PagingSpec {
  /** Field of the JSON answer holding this page's items (an array). */
  readonly items: string;
  /**
   * Field(s) of the answer holding the next page's cursor; with several, the first that is not
   * null is taken (the blackboard answers `history_next` walking back, `poll_next` walking forward).
   */
  readonly cursor: string | readonly string[];
  /** Field of the answer that says whether more pages follow; `false` ends the walk. */
  readonly hasMore?: string;
  /** Where the cursor goes in the next request. */
  readonly cursorIn: 'query' | 'body';
  /**
   * The request field that takes the cursor. Absent: the cursor is an object whose fields are
   * merged into the request (`{ before, before_id }` on the blackboard).
   */
  readonly cursorParam?: string;
}

/**
 * A list route that may show everyone's rows, not only the caller's (an operator view): who may
 * ask for it. The caller asks with the query flag `everyone=true` (see `everyoneQuery`); the
 * contract adapter refuses anyone else with 403 `everyone_view_not_allowed` before the handler
 * runs, and hands the handler the rows' scope (everyone's, or the caller's own). Without the flag
 * every caller, the operator too, sees only their own rows.
 */
export interface EveryoneView {
  /** The operator may ask (the operator token). */
  readonly operator: true;
  /** A principal holding every one of these scopes may ask too. */
  readonly scopes?: readonly Scope[];
  /** Older names of the `everyone` query flag, still accepted with the same meaning. */
  readonly aliases?: readonly string[];
}

/**
 * How agents reach a route as an MCP tool (agent-tools.ts). Absent: the rule in
 * `isAgentCallable` decides (JSON operations an agent would use are tools).
 */
export interface AgentMarker {
  /** `false`: never a tool (a secret in the answer, a purchase); `true`: a tool whatever the rule says. */
  readonly callable?: boolean;
  /** Why `callable` is set, for the docs and the walk test's message. */
  readonly reason?: string;
  /** The call removes or ends something (cancel, revoke); default: a DELETE or a key named cancel, revoke, delete or tombstone. */
  readonly destructive?: boolean;
  /** How a tool call reports progress when the client gives a `progressToken`: see AgentProgress. */
  readonly progress?: AgentProgress;
  /**
   * Arguments the tool does not take: a REST choice of another answer form than the JSON a tool
   * answers with (`format=csv` answers bytes). The route's default then applies.
   */
  readonly omit?: readonly string[];
}

/**
 * Progress of a long operation, as a tool reports it (`notifications/progress`):
 * - `stream`: the route streams (`stream: true`); each `itemEvent` is one step, the answer is the
 *   `finalEvent`'s data with the items gathered under `itemsField` (the JSON the route answers
 *   unstreamed); an `errorEvent` ends the call as an error;
 * - `poll`: the route is read again every `intervalMs` until `read` says done; each read is one
 *   report, the last read is the answer.
 */
export type AgentProgress =
  | { readonly stream: { readonly itemEvent: string; readonly itemsField: string; readonly finalEvent: string; readonly errorEvent: string } }
  | {
      readonly poll: {
        readonly intervalMs: number;
        readonly read: (answer: never) => { readonly done: boolean; readonly progress: number; readonly total?: number; readonly message?: string };
      };
    };

export interface RouteDefinition {
  readonly __route: true;
  readonly method: HttpMethod;
  /** Koa-router style path: `/v1/jobs/:job_id`. */
  readonly path: string;
  readonly surface: Surface;
  readonly auth: AuthRequirement;
  readonly summary: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly headers?: z.ZodType;
  readonly body?: z.ZodType;
  readonly bodyEncoding?: BodyEncoding;
  /** Byte cap of the request body; 413 past it. Defaults to 1 MiB. */
  readonly bodyLimitBytes?: number;
  /** Media types accepted for `bytes` bodies; anything else is 415. */
  readonly bodyMediaTypes?: readonly string[];
  /** Deadline for reading the whole body; 408 past it. */
  readonly bodyTimeoutMs?: number;
  /** Error statuses worth documenting beyond the ones the adapter adds from auth and input. */
  readonly errors?: readonly number[];
  /**
   * `any-origin`: a public discovery document browsers on any origin may read (CORS `*`). Other
   * routes answer cross-origin requests only from SVC_CORS_ORIGINS. Public GETs under
   * `/.well-known/` are discovery documents without saying so.
   */
  readonly cors?: 'any-origin';
  /**
   * `bayrun` answers every error of the route with the upload envelope (retryable flag set);
   * `jsonrpc` answers them as JSON-RPC 2.0 error bodies (a JSON-RPC endpoint's callers read no other shape);
   * `oauth` answers a 400 the adapter raises (malformed JSON, a bad body) the way RFC 6749 5.2
   * does, `error: "invalid_request"` with `error_description`, as the route's handler does.
   */
  readonly errorEnvelope?: 'standard' | 'bayrun' | 'jsonrpc' | 'oauth';
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  /** Set on routes that answer one page of a list (keyset or offset cursor plus a limit). */
  readonly paging?: PagingSpec;
  /** Set on list routes whose rows the operator (or a scope) may see for every principal. */
  readonly everyone?: EveryoneView;
  /** Whether and how agents call the route as an MCP tool; absent: decided by rule (agent-tools.ts). */
  readonly agent?: AgentMarker;
}

export const text = (contentType = 'text/plain; charset=utf-8') => ({ kind: 'text', contentType }) as const;
export const bytes = (contentType = 'application/octet-stream') => ({ kind: 'bytes', contentType }) as const;
export const sse = <T extends z.ZodType>(event: T) => ({ kind: 'sse', event }) as const;
/**
 * JSON, or a server-sent event stream when the request asked for one (`stream: true`): the server
 * streams when the handler answers an async iterable; the client decodes by `Content-Type`.
 */
export const jsonOrSse = <J extends z.ZodType, E extends z.ZodType>(json: J, event: E) => ({ kind: 'json-or-sse', json, event }) as const;
/**
 * JSON, or bytes of another media type when the request asked for them (an export as CSV): the
 * server sends bytes when the handler answers a Uint8Array or an async iterable of them; the
 * client decodes by `Content-Type`.
 */
export const jsonOrBytes = <J extends z.ZodType>(json: J, contentType: string) => ({ kind: 'json-or-bytes', json, contentType }) as const;
export const redirect = () => ({ kind: 'redirect' }) as const;
export const empty = () => ({ kind: 'empty' }) as const;
/** Identity function that keeps a paging declaration's literal field names for the client's types. */
export const paging = <const P extends PagingSpec>(spec: P): P => spec;

/** Identity function that only types its argument, so a malformed route is a compile error. */
export function defineRoute<const R extends Omit<RouteDefinition, '__route'>>(route: R): R & { readonly __route: true } {
  return { ...route, __route: true };
}

export interface ContractTree {
  readonly [key: string]: RouteDefinition | ContractTree;
}

export function defineContract<const C extends ContractTree>(contract: C): C {
  return contract;
}

export function isRoute(value: unknown): value is RouteDefinition {
  return typeof value === 'object' && value !== null && (value as { __route?: unknown }).__route === true;
}

/** Every route with its dotted key path (`blackboard.put`), the operationId everywhere. */
export function walkContract(tree: ContractTree, prefix: readonly string[] = []): Array<{ id: string; route: RouteDefinition }> {
  const out: Array<{ id: string; route: RouteDefinition }> = [];
  for (const [key, value] of Object.entries(tree)) {
    const path = [...prefix, key];
    if (isRoute(value)) out.push({ id: path.join('.'), route: value });
    else out.push(...walkContract(value, path));
  }
  return out;
}

/** `/v1/jobs/:job_id` -> `/v1/jobs/{job_id}` for OpenAPI and documents. */
export function toOpenApiPath(path: string): string {
  return path.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
}
