import { isRoute, type ClientResponse, type ContractTree, type PagingSpec, type RequestArgs, type RouteDefinition } from '@svc/schemas/core';
import { walkItems, walkPages, type ItemWalkOptions, type PageWalkOptions } from './paging.ts';
import type { CallOptions, RawResult, RequestInput, Transport } from './transport.ts';

/** One item of a paging route's list, typed from its response and its paging declaration. */
export type ItemOf<R extends RouteDefinition> = R extends { paging: { items: infer K extends string } }
  ? ClientResponse<R> extends infer Page
    ? Page extends { [F in K]: ReadonlyArray<infer Item> }
      ? Item
      : never
    : never
  : never;

/** What every route that declares `paging` gains beside its call. */
export interface PagingMethods<R extends RouteDefinition> {
  /**
   * Every item over every page, fetched lazily as the loop asks; `limit` caps the total.
   *
   * @example
   * ```ts
   * for await (const key of svc.developerKeys.list.all({ query: { limit: 100 } })) process.stdout.write(`${key.credential_id}\n`);
   * for await (const row of svc.catalog.search.all({ query: { q: 'rerank' } }, { limit: 10 })) process.stdout.write(`${row.id}\n`);
   * ```
   */
  all(...args: [...RequestArgs<R>, options?: ItemWalkOptions]): AsyncGenerator<ItemOf<R>, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(...args: [...RequestArgs<R>, options?: PageWalkOptions]): AsyncGenerator<ClientResponse<R>, void, undefined>;
}

/** One method per route: `(request?, options?) => Promise<data>`, plus `.all()`/`.pages()` where the route pages. */
export type ClientMethod<R extends RouteDefinition> = ((...args: [...RequestArgs<R>, options?: CallOptions]) => Promise<ClientResponse<R>>) &
  (R extends { paging: PagingSpec } ? PagingMethods<R> : unknown);
/** The same method, answering `{ data, response }` for callers that need headers. */
export type RawClientMethod<R extends RouteDefinition> = (...args: [...RequestArgs<R>, options?: CallOptions]) => Promise<RawResult<ClientResponse<R>>>;

export type ClientOf<C extends ContractTree> = {
  [K in keyof C]: C[K] extends RouteDefinition ? ClientMethod<C[K]> : C[K] extends ContractTree ? ClientOf<C[K]> : never;
};
export type RawClientOf<C extends ContractTree> = {
  [K in keyof C]: C[K] extends RouteDefinition ? RawClientMethod<C[K]> : C[K] extends ContractTree ? RawClientOf<C[K]> : never;
};

type Call = (route: RouteDefinition, input: RequestInput | undefined, options: CallOptions | undefined) => Promise<unknown>;

/** A route's method; a paging route's also walks its pages, from the declaration alone. */
function methodFor(route: RouteDefinition, call: Call, withPaging: boolean) {
  const method = (input?: RequestInput, options?: CallOptions) => call(route, input, options);
  if (!withPaging || !route.paging) return method;
  const spec = route.paging;
  const fetchPage = (input: RequestInput, options: CallOptions) => call(route, input, options);
  return Object.assign(method, {
    all: (input?: RequestInput, options?: ItemWalkOptions) => walkItems(spec, fetchPage, input, options),
    pages: (input?: RequestInput, options?: PageWalkOptions) => walkPages(spec, fetchPage, input, options),
  });
}

function buildTree(tree: ContractTree, call: Call, withPaging: boolean): unknown {
  return Object.fromEntries(
    Object.entries(tree).map(([key, node]) => [key, isRoute(node) ? methodFor(node, call, withPaging) : buildTree(node, call, withPaging)]),
  );
}

/** Derives a client for any contract tree (the full svc contract by default). */
export function createContractClient<C extends ContractTree>(tree: C, transport: Transport): { methods: ClientOf<C>; raw: RawClientOf<C> } {
  return {
    methods: buildTree(tree, async (route, input, options) => (await transport.request(route, input, options)).data, true) as ClientOf<C>,
    raw: buildTree(tree, (route, input, options) => transport.request(route, input, options), false) as RawClientOf<C>,
  };
}
