import type { Sequelize } from 'sequelize';
import { CONSOLE_PATH, type OAuthClientRegistrationRequest, type OAuthClientRegistrationResponse, type OAuthTokenResponse, type Scope } from '@svc/schemas';
import type { IdentityConfig } from './identity-config.ts';
import { consumeWindow } from '../../db/rate-counters.ts';
import { ServiceError } from '../../service-error.ts';
import { OAuthStore } from './oauth-store.ts';
import { newId, type OAuthTokens, type ClientRegistration } from './oauth-tokens.ts';
import { clientMetadataOf } from './oauth-registration.ts';
import { boundResource, nowSeconds, OAuthGrants, type TokenRequest } from './oauth-grants.ts';
import type { ClientMetadataDocuments } from './client-metadata-documents.ts';
import { OAuthFailure, scopesFrom } from './oauth-rules.ts';

export { DEMO_TIER_SCOPES, OAuthFailure, redirectUriProblem, type OAuthErrorCode } from './oauth-rules.ts';

export interface AuthorizeRequest {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  resource?: string | string[];
}

/**
 * Where an authorization answer goes: a redirect when the URI is trusted, else a direct 400.
 * `browser` is the browser id to keep in the authorization endpoint's cookie, for a sign-in to the
 * console (see `authorize`).
 */
export type AuthorizeOutcome = { kind: 'redirect'; location: string; browser?: string } | { kind: 'direct'; failure: OAuthFailure };

/** A browser id: 256 random bits, base64url (what `newId(32)` makes); anything else is replaced. */
const BROWSER_ID = /^[A-Za-z0-9_-]{43}$/;

export interface RevocationRequest {
  token?: string;
  token_type_hint?: string;
  client_id?: string;
  client_secret?: string;
}

type RevocableToken =
  | { kind: 'refresh'; clientId: string; publicClient: boolean; familyId: string }
  | { kind: 'access'; clientId: string; publicClient: boolean; id: string; expiresAt: number };

/**
 * The OAuth grant logic, Koa-free. Stateless except for the spent-id and revoked-family
 * records: clients, codes and tokens are signed (see oauth-tokens.ts).
 */
export class OAuthService {
  readonly tokens: OAuthTokens;
  readonly store: OAuthStore;
  readonly #config: IdentityConfig;
  readonly #sequelize: Sequelize;
  readonly #publicUrls: () => { baseUrl: string; apiUrl: string };
  readonly #clientDocuments: ClientMetadataDocuments;
  readonly #grants: OAuthGrants;

  constructor(options: {
    tokens: OAuthTokens;
    sequelize: Sequelize;
    config: IdentityConfig;
    publicUrls: () => { baseUrl: string; apiUrl: string };
    clientDocuments: ClientMetadataDocuments;
    /** After a token or family revocation committed: this replica's credential cache forgets at once. */
    revoked?: () => void;
  }) {
    this.tokens = options.tokens;
    this.#sequelize = options.sequelize;
    this.store = new OAuthStore(options.sequelize, options.revoked);
    this.#config = options.config;
    this.#publicUrls = options.publicUrls;
    this.#clientDocuments = options.clientDocuments;
    this.#grants = new OAuthGrants({ tokens: this.tokens, store: this.store, config: this.#config, publicUrls: this.#publicUrls });
  }

  /** The issuer is the base URL (RFC 8414). */
  #issuer(): string {
    return this.#publicUrls().baseUrl;
  }

  async register(request: OAuthClientRegistrationRequest): Promise<OAuthClientRegistrationResponse> {
    const { authMethod, publicClient, redirectUris, grantTypes, responseTypes, scopes } = clientMetadataOf(request);
    const id = newId();
    const clientId = await this.tokens.signClient({ id, authMethod, redirectUris, grantTypes, scopes, name: request.client_name });
    return {
      client_id: clientId,
      client_id_issued_at: nowSeconds(),
      ...(publicClient ? {} : { client_secret: this.tokens.clientSecret(id), client_secret_expires_at: 0 }),
      ...(redirectUris.length > 0 ? { redirect_uris: redirectUris } : {}),
      token_endpoint_auth_method: authMethod,
      grant_types: grantTypes,
      response_types: responseTypes,
      ...(request.client_name ? { client_name: request.client_name } : {}),
      scope: scopes.join(' '),
    };
  }

  /**
   * A signed registration, or (for a client_id that is a URL) the client's metadata document.
   * Downloading a document counts as a registration under the caller's per-address limit, so
   * nobody makes svc fetch URLs faster than they could register clients.
   */
  async #client(clientId: string, ip: string): Promise<ClientRegistration> {
    if (/^[a-z][a-z0-9+.-]*:/i.test(clientId)) return this.#clientDocuments.registration(clientId, () => this.limitRegistrations(ip));
    try {
      return await this.tokens.verifyClient(clientId);
    } catch {
      throw new OAuthFailure('invalid_client', 'The client_id is not a registration this server signed, nor the https URL of a client ID metadata document.');
    }
  }

  /**
   * RFC 6749 4.1.2.1: problems with the client or redirect URI are answered directly, the rest by redirect.
   * `browser` is the id the browser's cookie of this endpoint carries, if any.
   */
  async authorize(request: AuthorizeRequest, ip: string, browser?: string): Promise<AuthorizeOutcome> {
    if (!request.client_id) return { kind: 'direct', failure: new OAuthFailure('invalid_request', 'client_id is required.') };
    let client: ClientRegistration;
    try {
      client = await this.#client(request.client_id, ip);
    } catch (error) {
      if (!(error instanceof OAuthFailure)) throw error;
      return { kind: 'direct', failure: error };
    }
    let redirectUri = request.redirect_uri;
    if (redirectUri === undefined && client.redirectUris.length === 1) redirectUri = client.redirectUris[0];
    if (redirectUri === undefined || !client.redirectUris.includes(redirectUri)) {
      return {
        kind: 'direct',
        failure: new OAuthFailure('invalid_request', 'redirect_uri must be given and equal one registered for this client, character for character.'),
      };
    }
    const answer = (params: Record<string, string | undefined>, browserId?: string): AuthorizeOutcome => {
      const url = new URL(redirectUri);
      for (const [name, value] of Object.entries({ ...params, state: request.state, iss: this.#issuer() }))
        if (value !== undefined) url.searchParams.set(name, value);
      return { kind: 'redirect', location: url.toString(), ...(browserId ? { browser: browserId } : {}) };
    };
    const fail = (failure: OAuthFailure) => answer({ error: failure.error, error_description: failure.message });
    if (request.response_type !== 'code') return fail(new OAuthFailure('unsupported_response_type', 'response_type must be `code`.'));
    if (!client.grantTypes.includes('authorization_code'))
      return fail(new OAuthFailure('unauthorized_client', 'This client is not registered for the authorization_code grant.'));
    if (!request.code_challenge) return fail(new OAuthFailure('invalid_request', 'PKCE is required: send code_challenge and code_challenge_method=S256.'));
    if (request.code_challenge_method !== 'S256')
      return fail(new OAuthFailure('invalid_request', 'Only code_challenge_method=S256 is supported; plain is refused.'));
    if (!/^[A-Za-z0-9_-]{43}$/.test(request.code_challenge))
      return fail(new OAuthFailure('invalid_request', 'code_challenge must be the 43-character base64url SHA-256 of the verifier.'));
    let scopes: Scope[];
    let resource: string | undefined;
    try {
      scopes = scopesFrom(request.scope, client.scopes, client.scopes);
      resource = boundResource(request.resource, undefined, this.#publicUrls());
    } catch (error) {
      return fail(error as OAuthFailure);
    }
    // Approval is automatic. A sign-in to the console (the code goes back to svc's own console
    // page, nowhere else) is the person at this browser: one agent per browser, named by a random
    // id in an HttpOnly cookie of this endpoint, so signing in again finds the keys made before.
    // The code still lands only in that browser, and only the holder of its PKCE verifier can
    // spend it. Any other client's authorization mints a fresh private agent identity that only
    // the holder of the code (and then of its refresh tokens) can act as: a third-party client
    // never reaches the console's agent, even when the same browser approves it.
    const browserId = redirectUri === `${this.#issuer()}${CONSOLE_PATH}callback` ? (browser && BROWSER_ID.test(browser) ? browser : newId(32)) : undefined;
    const code = await this.tokens.signCode(
      {
        id: newId(),
        clientId: client.id,
        publicClient: client.authMethod === 'none',
        redirectUri,
        codeChallenge: request.code_challenge,
        scopes,
        subject: browserId ? this.tokens.browserSubject(browserId) : `agt_${newId()}`,
        ...(resource ? { resource } : {}),
      },
      this.#config.codeTtlSeconds,
    );
    return answer({ code }, browserId);
  }

  /** Per-IP limit of the demo tier, counted in the database so replicas share it. */
  async limitTokenRequests(ip: string): Promise<void> {
    const decision = await consumeWindow(this.#sequelize, { bucket: `oauth-token:ip:${ip}`, windowSeconds: 60, maxHits: this.#config.tokenRatePerMinute });
    if (!decision.allowed) {
      throw new ServiceError('rate_limited', `Too many token requests from this address (at most ${this.#config.tokenRatePerMinute} per minute).`, {
        retryAfterSeconds: decision.retryAfterSeconds,
        retryable: true,
      });
    }
  }

  /** Per-IP limit of client registration (RFC 7591 is open to anyone), shared by replicas. */
  async limitRegistrations(ip: string): Promise<void> {
    const perMinute = this.#config.registerRatePerMinute;
    const decision = await consumeWindow(this.#sequelize, { bucket: `oauth-register:ip:${ip}`, windowSeconds: 60, maxHits: perMinute });
    if (!decision.allowed) {
      throw new ServiceError(
        'rate_limited',
        `Too many client registrations from this address (at most ${perMinute} per minute); reuse the client_id you registered.`,
        { retryAfterSeconds: decision.retryAfterSeconds, retryable: true },
      );
    }
  }

  /**
   * RFC 7009 revocation. A token that is not ours, malformed or expired is answered like a
   * revoked one (nothing to do), so the caller learns nothing and a retry is always safe.
   */
  async revoke(request: RevocationRequest, basic: { id: string; secret: string } | undefined, ip: string): Promise<void> {
    const { client, authenticated } = await this.#authenticateClient(request, basic, ip);
    if (!request.token) throw new OAuthFailure('invalid_request', 'token is required.');
    const target = await this.#revocable(request.token, request.token_type_hint);
    if (!target) return;
    if (client && client.id !== target.clientId) throw new OAuthFailure('invalid_grant', 'The token was issued to another client.');
    if (!target.publicClient && !authenticated) throw new OAuthFailure('invalid_client', 'The client this token was issued to must authenticate to revoke it.');
    if (target.kind === 'refresh') {
      await this.store.revokeFamily(target.familyId, 'refresh token revoked', nowSeconds() + this.#config.refreshTokenTtlSeconds);
    } else {
      await this.store.revokeAccessToken(target.id, target.expiresAt);
    }
  }

  /** Which of our tokens this is, trying the hinted kind first (RFC 7009 2.1); undefined when neither. */
  async #revocable(token: string, hint: string | undefined): Promise<RevocableToken | undefined> {
    const asRefresh = async (): Promise<RevocableToken | undefined> => {
      const claims = await this.tokens.verifyRefresh(token).catch(() => undefined);
      return claims && { kind: 'refresh', clientId: claims.clientId, publicClient: claims.publicClient, familyId: claims.familyId };
    };
    const asAccess = async (): Promise<RevocableToken | undefined> => {
      const claims = await this.tokens.verifyAccess(token).catch(() => undefined);
      return claims && { kind: 'access', clientId: claims.clientId, publicClient: claims.publicClient === true, id: claims.id, expiresAt: claims.expiresAt };
    };
    return hint === 'refresh_token' ? ((await asRefresh()) ?? (await asAccess())) : ((await asAccess()) ?? (await asRefresh()));
  }

  /** Client authentication (RFC 6749 2.3.1): Basic header or body secret; public clients may send only client_id. */
  async #authenticateClient(
    request: TokenRequest | RevocationRequest,
    basic: { id: string; secret: string } | undefined,
    ip: string,
  ): Promise<{ client?: ClientRegistration; authenticated: boolean }> {
    if (basic && request.client_secret) throw new OAuthFailure('invalid_request', 'Use one client authentication method, not both.');
    const clientId = basic?.id ?? request.client_id;
    const secret = basic?.secret ?? request.client_secret;
    if (basic && request.client_id && request.client_id !== basic.id)
      throw new OAuthFailure('invalid_request', 'client_id in the body differs from the Basic credentials.');
    if (!clientId) return { authenticated: false };
    const client = await this.#client(clientId, ip);
    if (client.authMethod === 'none') {
      if (secret) throw new OAuthFailure('invalid_client', 'This is a public client; it has no secret.');
      return { client, authenticated: false };
    }
    if (!secret) throw new OAuthFailure('invalid_client', 'This client must authenticate with its client_secret.');
    if (!this.tokens.checkClientSecret(client.id, secret)) throw new OAuthFailure('invalid_client', 'The client secret is wrong.');
    return { client, authenticated: true };
  }

  async token(request: TokenRequest, basic: { id: string; secret: string } | undefined, ip: string): Promise<OAuthTokenResponse> {
    const { client, authenticated } = await this.#authenticateClient(request, basic, ip);
    switch (request.grant_type) {
      case 'authorization_code':
        return this.#grants.authorizationCode(request, client, authenticated);
      case 'refresh_token':
        return this.#grants.refreshToken(request, client, authenticated);
      case 'client_credentials':
        return this.#grants.clientCredentials(request, client, authenticated);
      case undefined:
        throw new OAuthFailure('invalid_request', 'grant_type is required.');
      default:
        throw new OAuthFailure('unsupported_grant_type', `grant_type must be one of authorization_code, client_credentials, refresh_token.`);
    }
  }
}
