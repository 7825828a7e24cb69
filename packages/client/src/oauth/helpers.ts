import {
  oauthContract,
  pathFor,
  type Contract,
  type OAuthClientRegistrationRequest,
  type OAuthClientRegistrationResponse,
  type OAuthTokenResponse,
} from '@svc/schemas';
import type { ClientOf } from '../derive.ts';
import { SvcError } from '../errors.ts';
import { createPkcePair, pkceChallenge, type PkcePair } from './pkce.ts';
import { sessionFromTokens, type OAuthSession } from './session.ts';

/** The authorization answer, parsed from the redirect URI the server sent the caller to. */
export interface AuthorizationResult {
  code: string;
  state: string | undefined;
  iss: string | undefined;
}

/** The authorization step went wrong on the client's side of the redirect; `error` is the RFC 6749 code. */
export class OAuthFlowError extends SvcError {
  readonly error: string;
  constructor(error: string, description: string) {
    // The same code shape as the server's OAuth answers, so one branch on `code` serves both.
    super(`${error}: ${description}`, { code: `oauth_error:${error}` });
    this.name = 'OAuthFlowError';
    this.error = error;
  }
}

export interface OAuthHelpers {
  /** A PKCE verifier and its S256 challenge. */
  createPkce(): Promise<PkcePair>;
  pkceChallenge(verifier: string): Promise<string>;
  /** The URL to send a user agent to (the server approves at once and redirects). */
  authorizeUrl(request: { clientId: string; redirectUri: string; codeChallenge: string; state?: string; scope?: string }): string;
  /** Calls the authorization endpoint itself and reads the code from the redirect: no browser needed. */
  authorizeDirect(request: { clientId: string; redirectUri: string; codeChallenge: string; state?: string; scope?: string }): Promise<AuthorizationResult>;
  exchangeCode(request: { code: string; codeVerifier: string; redirectUri: string; clientId?: string }): Promise<OAuthSession>;
  refresh(request: { refreshToken: string; clientId?: string; scope?: string }): Promise<OAuthSession>;
  clientCredentials(request: { clientId: string; clientSecret: string; scope?: string }): Promise<OAuthSession>;
  /**
   * Revokes a token (RFC 7009). A refresh token takes every token of its authorization with it.
   * Safe to retry: an unknown, expired or already revoked token is not an error.
   */
  revokeToken(request: { token: string; tokenTypeHint?: 'access_token' | 'refresh_token'; clientId?: string; clientSecret?: string }): Promise<void>;
  /**
   * Ends a session on the server: revokes its refresh token (and so its access tokens too), or
   * its access token when it has no refresh token.
   *
   * @example
   * ```ts
   * await svc.oauth.logout(session); // the session's tokens are refused from now on
   * ```
   */
  logout(session: { accessToken: string; refreshToken?: string; clientId?: string }): Promise<void>;
  /** Registers a public client for `redirectUri` and runs authorization code + PKCE to the end. */
  login(request?: { redirectUri?: string; clientName?: string; scope?: string; clientId?: string }): Promise<OAuthSession & { clientId: string }>;
}

export const DEFAULT_LOOPBACK_REDIRECT = 'http://127.0.0.1:8976/callback';

/** Parses `?code=...&state=...` or `?error=...` from a redirect location. */
export function parseAuthorizationRedirect(location: string): AuthorizationResult {
  const url = new URL(location);
  const error = url.searchParams.get('error');
  if (error) throw new OAuthFlowError(error, url.searchParams.get('error_description') ?? 'authorization refused');
  const code = url.searchParams.get('code');
  if (!code) throw new OAuthFlowError('invalid_response', `no code in the redirect to ${url.origin}${url.pathname}`);
  return { code, state: url.searchParams.get('state') ?? undefined, iss: url.searchParams.get('iss') ?? undefined };
}

/** OAuth helpers over the contract-derived `oauth` methods. */
/** The authorization request's query: a code with PKCE (S256), as both ways of starting one send it. */
function authorizeQuery({ clientId, redirectUri, codeChallenge, state, scope }: Parameters<OAuthHelpers['authorizeUrl']>[0]) {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: codeChallenge,
    code_challenge_method: 'S256',
    state,
    scope,
  } as const;
}

export function createOAuthHelpers(methods: ClientOf<Contract>['oauth'], baseUrl: string): OAuthHelpers {
  const token = (body: Record<string, string | undefined>): Promise<OAuthTokenResponse> => methods.token({ body }, { retry: 0 });
  const helpers: OAuthHelpers = {
    createPkce: createPkcePair,
    pkceChallenge,
    authorizeUrl(request) {
      const url = new URL(`${baseUrl}${pathFor(oauthContract.authorize)}`);
      for (const [name, value] of Object.entries(authorizeQuery(request))) if (value !== undefined) url.searchParams.set(name, value);
      return url.toString();
    },
    async authorizeDirect(request) {
      const { state } = request;
      const { location } = await methods.authorize({ query: authorizeQuery(request) });
      const result = parseAuthorizationRedirect(location);
      if (state !== undefined && result.state !== state) throw new OAuthFlowError('invalid_state', 'the state in the redirect differs from the one sent');
      if (result.iss !== undefined && result.iss !== baseUrl)
        throw new OAuthFlowError('invalid_issuer', `the redirect names issuer ${result.iss}, not ${baseUrl}`);
      return result;
    },
    async exchangeCode({ code, codeVerifier, redirectUri, clientId }) {
      return sessionFromTokens(
        await token({ grant_type: 'authorization_code', code, code_verifier: codeVerifier, redirect_uri: redirectUri, client_id: clientId }),
        clientId,
      );
    },
    async refresh({ refreshToken, clientId, scope }) {
      return sessionFromTokens(await token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, scope }), clientId);
    },
    async clientCredentials({ clientId, clientSecret, scope }) {
      return sessionFromTokens(await token({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope }), clientId);
    },
    async revokeToken({ token: revoked, tokenTypeHint, clientId, clientSecret }) {
      await methods.revoke({ body: { token: revoked, token_type_hint: tokenTypeHint, client_id: clientId, client_secret: clientSecret } });
    },
    async logout({ accessToken, refreshToken, clientId }) {
      if (refreshToken) await helpers.revokeToken({ token: refreshToken, tokenTypeHint: 'refresh_token', clientId });
      else await helpers.revokeToken({ token: accessToken, tokenTypeHint: 'access_token', clientId });
    },
    async login({ redirectUri = DEFAULT_LOOPBACK_REDIRECT, clientName = 'svc client', scope, clientId } = {}) {
      let id = clientId;
      if (!id) {
        const registration: OAuthClientRegistrationResponse = await methods.register({
          body: { redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', client_name: clientName } satisfies OAuthClientRegistrationRequest,
        });
        id = registration.client_id;
      }
      const pkce = await createPkcePair();
      const state = pkce.verifier.slice(0, 16);
      const { code } = await helpers.authorizeDirect({ clientId: id, redirectUri, codeChallenge: pkce.challenge, state, scope });
      return { ...(await helpers.exchangeCode({ code, codeVerifier: pkce.verifier, redirectUri, clientId: id })), clientId: id };
    },
  };
  return helpers;
}
