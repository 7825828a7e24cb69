import { contract, type Contract } from '@svc/schemas';
import { createContractClient, type RawClientOf } from './derive.ts';
import { attachFeatureHelpers, oauthHelpersFor, type FeatureClient } from './feature-helpers.ts';
import { resolveOptions, Transport, type ClientOptions } from './transport.ts';
import type { OAuthHelpers } from './oauth/helpers.ts';
import type { OAuthSession } from './oauth/session.ts';
import { createChatHelpers, type ChatCompletionsHelpers } from './inference/chat.ts';

export { createContractClient, type ClientMethod, type ClientOf, type ItemOf, type PagingMethods, type RawClientMethod, type RawClientOf } from './derive.ts';
export type { BlackboardHelpers } from './blackboard/helpers.ts';

/**
 * Every feature's derived methods (a paging route also has `.all()` and `.pages()`) with the
 * helpers its module registers in `featureHelpers`, plus the plumbing underneath.
 */
export type SvcClient = { readonly [Feature in keyof Contract]: FeatureClient<Feature> } & {
  /** Chat completions as openai-node spells them: `svc.chat.completions.create({ messages, stream })`. */
  readonly chat: { readonly completions: ChatCompletionsHelpers };
  /**
   * @deprecated The former name of `developerKeys` (the same methods), after the spec's path
   * `/v1/developer/credentials`; kept working, to be removed in a major version.
   */
  readonly credentials: FeatureClient<'developerKeys'>;
  /** Every method again, answering `{ data, response }` (headers, status); `credentials` is `developerKeys`'s former name. */
  readonly withResponse: RawClientOf<Contract> & {
    /** @deprecated The former name of `withResponse.developerKeys`. */
    readonly credentials: RawClientOf<Contract>['developerKeys'];
  };
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
  const resolved = resolveOptions(rest);
  let transportOptions = resolved;
  if (session && rest.token === undefined) {
    const refresh = sessionRefresher(session, oauthHelpersFor(resolved), onSessionRefreshed);
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
  attachFeatureHelpers({ methods, transport });
  return Object.assign(methods as unknown as SvcClient, {
    chat: createChatHelpers(methods.inference),
    credentials: methods.developerKeys,
    withResponse: Object.assign(raw, { credentials: raw.developerKeys }),
    transport,
    baseUrl: transport.options.baseUrl,
    apiUrl: transport.options.apiUrl,
  });
}
