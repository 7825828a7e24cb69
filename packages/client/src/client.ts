import { contract, isRoute, type BlackboardRecord, type ClientResponse, type ContractTree, type Contract, type RequestArgs, type RouteDefinition } from '@svc/schemas';
import { watchBlackboard, type WatchOptions } from './blackboard/watch.ts';
import { catalogHelpers, type CatalogHelpers } from './catalog/index.ts';
import { resolveOptions, Transport, type CallOptions, type ClientOptions, type RawResult, type RequestInput } from './transport.ts';
import { createOAuthHelpers, type OAuthHelpers } from './oauth/helpers.ts';
import type { OAuthSession } from './oauth/session.ts';
import { createPdfHelpers, type DocumentHelpers, type PdfHelpers } from './pdf/pdf-helpers.ts';
import { createJobsHelpers, type JobsHelpers } from './jobs/jobs-helpers.ts';

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

/** Helpers on `client.blackboard` beyond the contract's routes. */
export interface BlackboardHelpers {
  /**
   * New posts of a channel (`key`) or of a query (`filters`) as they arrive, polling with
   * jittered backoff (5, 10, 20, 30 s). Stop it with `signal` or by breaking the loop.
   *
   * @example
   * ```ts
   * const stop = new AbortController();
   * for await (const post of svc.blackboard.watch({ key: 'rerank:3f2a…', signal: stop.signal })) {
   *   process.stdout.write(`${post.created_at} ${post.item.text}\n`);
   * }
   * ```
   */
  watch(options: WatchOptions): AsyncGenerator<BlackboardRecord, void, undefined>;
}

/**
 * The helpers each feature attaches to its routes' methods, by contract key. A feature adds its
 * helpers here (and attaches them in `createClient`); a helper of the same name as a route
 * (`jobs.submit`) replaces the derived method, which stays on `withResponse`.
 */
export interface FeatureHelpers {
  /** The blackboard's routes plus `watch`. */
  blackboard: BlackboardHelpers;
  /** The catalog's routes plus `verifiedDownload` and `downloadArtifact`. */
  catalog: CatalogHelpers;
  /** The OAuth routes plus helpers: PKCE, authorize, code exchange, refresh, client credentials, login. */
  oauth: OAuthHelpers;
  /** The PDF routes, plus `extractFile` (upload) and `streamPages` (server-sent events). */
  pdf: PdfHelpers;
  /** The document route, plus `extractFile`. */
  documents: DocumentHelpers;
  /** The job routes, with `submit` taking the request and an optional key, plus `wait` and `waitForResult`. */
  jobs: JobsHelpers;
}

type WithHelpers<K extends keyof ClientOf<Contract>> = K extends keyof FeatureHelpers ? Omit<ClientOf<Contract>[K], keyof FeatureHelpers[K]> & FeatureHelpers[K] : ClientOf<Contract>[K];

export type SvcClient = { readonly [K in keyof ClientOf<Contract>]: WithHelpers<K> } & {
  /** Every method again, answering `{ data, response }` (headers, status). */
  readonly withResponse: RawClientOf<Contract>;
  readonly transport: Transport;
  readonly baseUrl: string;
  readonly apiUrl: string;
};

export interface SvcClientOptions extends ClientOptions {
  /**
   * Signed-in OAuth tokens. Requests carry its access token; an expired one is refreshed once
   * (on a 401, or before the request when `expiresAt` has passed) and the request retried.
   * The session object is updated in place; `onSessionRefreshed` lets you persist it.
   */
  session?: OAuthSession;
  onSessionRefreshed?: (session: OAuthSession) => void | Promise<void>;
}

/** Refreshes the session's tokens, one refresh at a time: a rotated refresh token works only once. */
function sessionRefresher(session: OAuthSession, oauth: OAuthHelpers, onRefreshed: SvcClientOptions['onSessionRefreshed']) {
  let inFlight: Promise<string | undefined> | undefined;
  return (refusedToken?: string) => {
    // A parallel request already refreshed: retry with the new token instead of refreshing again.
    if (!inFlight && refusedToken !== undefined && refusedToken !== session.accessToken) return Promise.resolve(session.accessToken);
    inFlight ??= (async () => {
      if (!session.refreshToken) return undefined;
      try {
        const renewed = await oauth.refresh({ refreshToken: session.refreshToken, clientId: session.clientId });
        Object.assign(session, renewed, { clientId: session.clientId });
        await onRefreshed?.(session);
        return session.accessToken;
      } catch {
        return undefined;
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  };
}

/**
 * A typed client for every svc endpoint, derived from the contract.
 *
 * @example
 * ```ts
 * import { createClient } from '@svc/client';
 * const svc = createClient({ baseUrl: 'http://127.0.0.1:8787', token: process.env.SVC_TOKEN });
 * const health = await svc.system.healthz();
 * process.stdout.write(`${health.status} ${health.database.kind}\n`);
 * ```
 */
export function createClient(options: SvcClientOptions = {}): SvcClient {
  const { session, onSessionRefreshed, ...rest } = options;
  // The token endpoint is called by a transport of its own: it carries no bearer and never refreshes.
  const resolved = resolveOptions(rest);
  const oauthTransport = new Transport({ ...resolved, token: undefined, onUnauthorized: undefined });
  const oauthHelpers = createOAuthHelpers(createContractClient(contract, oauthTransport).methods.oauth, resolved.baseUrl);
  let transportOptions = resolved;
  if (session && rest.token === undefined) {
    const refresh = sessionRefresher(session, oauthHelpers, onSessionRefreshed);
    transportOptions = {
      ...resolved,
      token: async () => {
        if (session.expiresAt !== undefined && Date.now() >= session.expiresAt - 5_000 && session.refreshToken) await refresh();
        return session.accessToken;
      },
      onUnauthorized: refresh,
    };
  }
  const transport = new Transport(transportOptions);
  const { methods, raw } = createContractClient(contract, transport);
  const blackboard = methods.blackboard;
  const helpers: BlackboardHelpers = {
    watch: (options) =>
      watchBlackboard(
        (arguments_, callOptions) =>
          options.key !== undefined ? blackboard.getPost({ body: arguments_ as never }, callOptions) : blackboard.queryPost({ body: arguments_ as never }, callOptions),
        options,
      ),
  };
  Object.assign(blackboard, helpers);
  Object.assign(methods.catalog, catalogHelpers(transport));
  Object.assign(methods.oauth, oauthHelpers);
  const pdfHelpers = createPdfHelpers(methods);
  Object.assign(methods.pdf, pdfHelpers.pdf);
  Object.assign(methods.documents, pdfHelpers.documents);
  Object.assign(methods.jobs, createJobsHelpers({ ...methods.jobs }));
  return Object.assign(methods as unknown as SvcClient, { withResponse: raw, transport, baseUrl: transport.options.baseUrl, apiUrl: transport.options.apiUrl });
}
