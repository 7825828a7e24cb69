import { contract, isRoute, type ClientResponse, type ContractTree, type Contract, type RequestArgs, type RouteDefinition } from '@svc/schemas';
import { resolveOptions, Transport, type CallOptions, type ClientOptions, type RawResult, type RequestInput } from './transport.ts';
import { createPdfHelpers, type DocumentHelpers, type PdfHelpers } from './pdf/pdf-helpers.ts';

/** One method per route: `(request?, options?) => Promise<data>`. */
export type ClientMethod<R extends RouteDefinition> = (...args: [...RequestArgs<R>, options?: CallOptions]) => Promise<ClientResponse<R>>;
/** The same method, answering `{ data, response }` for callers that need headers. */
export type RawClientMethod<R extends RouteDefinition> = (...args: [...RequestArgs<R>, options?: CallOptions]) => Promise<RawResult<ClientResponse<R>>>;

export type ClientOf<C extends ContractTree> = {
  [K in keyof C]: C[K] extends RouteDefinition ? ClientMethod<C[K]> : C[K] extends ContractTree ? ClientOf<C[K]> : never;
};
export type RawClientOf<C extends ContractTree> = {
  [K in keyof C]: C[K] extends RouteDefinition ? RawClientMethod<C[K]> : C[K] extends ContractTree ? RawClientOf<C[K]> : never;
};

function buildTree(tree: ContractTree, call: (route: RouteDefinition, input: RequestInput | undefined, options: CallOptions | undefined) => Promise<unknown>): unknown {
  return Object.fromEntries(
    Object.entries(tree).map(([key, node]) => [
      key,
      isRoute(node) ? (input?: RequestInput, options?: CallOptions) => call(node, input, options) : buildTree(node, call),
    ]),
  );
}

/** Derives a client for any contract tree (the full svc contract by default). */
export function createContractClient<C extends ContractTree>(tree: C, transport: Transport): { methods: ClientOf<C>; raw: RawClientOf<C> } {
  return {
    methods: buildTree(tree, async (route, input, options) => (await transport.request(route, input, options)).data) as ClientOf<C>,
    raw: buildTree(tree, (route, input, options) => transport.request(route, input, options)) as RawClientOf<C>,
  };
}

export type SvcClient = Omit<ClientOf<Contract>, 'pdf' | 'documents'> & {
  /** The PDF routes, plus `extractFile` (upload) and `streamPages` (server-sent events). */
  readonly pdf: ClientOf<Contract>['pdf'] & PdfHelpers;
  /** The document route, plus `extractFile`. */
  readonly documents: ClientOf<Contract>['documents'] & DocumentHelpers;
  /** Every method again, answering `{ data, response }` (headers, status). */
  readonly withResponse: RawClientOf<Contract>;
  readonly transport: Transport;
  readonly baseUrl: string;
  readonly apiUrl: string;
};

/**
 * A typed client for every svc endpoint, derived from the contract.
 *
 * @example
 * ```ts
 * import { createClient } from '@svc/client';
 * const svc = createClient({ baseUrl: 'http://127.0.0.1:8787', token: process.env.SVC_TOKEN });
 * const health = await svc.system.healthz();
 * console.log(health.status, health.database.kind);
 * ```
 */
export function createClient(options: ClientOptions = {}): SvcClient {
  const transport = new Transport(resolveOptions(options));
  const { methods, raw } = createContractClient(contract, transport);
  const helpers = createPdfHelpers(methods);
  Object.assign(methods.pdf, helpers.pdf);
  Object.assign(methods.documents, helpers.documents);
  return Object.assign(methods as SvcClient, { withResponse: raw, transport, baseUrl: transport.options.baseUrl, apiUrl: transport.options.apiUrl });
}
