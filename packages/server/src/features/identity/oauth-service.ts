import { createHash } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import { CONSOLE_PATH, type OAuthClientRegistrationRequest, type OAuthClientRegistrationResponse, type OAuthTokenResponse, type Scope } from '@svc/schemas';
import type { IdentityConfig } from './identity-config.ts';
import { consumeWindow } from '../../db/rate-counters.ts';
import { ServiceError } from '../../service-error.ts';
import { OAuthStore } from './oauth-store.ts';
import { newId, type OAuthTokens, type TokenRefused, type ClientRegistration } from './oauth-tokens.ts';
import type { ClientMetadataDocuments } from './client-metadata-documents.ts';
import { matchResource, svcResources } from './resource-indicators.ts';
import { DEMO_TIER_SCOPES, OAuthFailure, redirectUriProblem, scopesFrom } from './oauth-rules.ts';

export { DEMO_TIER_SCOPES, OAuthFailure, redirectUriProblem, type OAuthErrorCode } from './oauth-rules.ts';

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;
const nowSeconds = () => Math.floor(Date.now() / 1000);

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

export interface TokenRequest {
  grant_type?: string;
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
  client_id?: string;
  client_secret?: string;
  refresh_token?: string;
  scope?: string;
  resource?: string | string[];
}

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
  }

  /** The issuer is the base URL (RFC 8414). */
  #issuer(): string {
    return this.#publicUrls().baseUrl;
  }

  /**
   * The RFC 8707 resource a grant is bound to: svc's spelling of the requested one, or the one the
   * authorization already carries. A request may repeat that one or bind an unbound grant, never
   * switch it (a token for one resource must not be turned into a token for another).
   */
  #boundResource(asked: string | string[] | undefined, granted: string | undefined): string | undefined {
    if (asked === undefined) return granted;
    const distinct = [...new Set(typeof asked === 'string' ? [asked] : asked)];
    if (distinct.length > 1)
      throw new OAuthFailure(
        'invalid_target',
        `A token is bound to one resource; ask for one of ${distinct.map((value) => JSON.stringify(value.slice(0, 200))).join(', ')}.`,
      );
    const requested = distinct[0]!;
    const resource = matchResource(requested, this.#publicUrls());
    if (resource === undefined) {
      throw new OAuthFailure(
        'invalid_target',
        `resource ${JSON.stringify(requested.slice(0, 200))} is not served here; ask for one of ${svcResources(this.#publicUrls()).join(', ')}.`,
      );
    }
    if (granted !== undefined && granted !== resource)
      throw new OAuthFailure('invalid_target', `This authorization is bound to the resource ${granted}; ask for it, or omit resource.`);
    return resource;
  }

  async register(request: OAuthClientRegistrationRequest): Promise<OAuthClientRegistrationResponse> {
    const redirectUris = request.redirect_uris ?? [];
    const authMethod = request.token_endpoint_auth_method ?? (redirectUris.length > 0 ? 'none' : 'client_secret_basic');
    const publicClient = authMethod === 'none';
    const grantTypes = [
      ...new Set(
        request.grant_types ??
          (publicClient
            ? ['authorization_code', 'refresh_token']
            : redirectUris.length > 0
              ? ['authorization_code', 'refresh_token', 'client_credentials']
              : ['client_credentials']),
      ),
    ] as ClientRegistration['grantTypes'];
    if (publicClient && grantTypes.includes('client_credentials')) {
      throw new OAuthFailure(
        'invalid_client_metadata',
        'client_credentials needs a client that authenticates: register with token_endpoint_auth_method client_secret_basic or client_secret_post.',
      );
    }
    if (grantTypes.includes('authorization_code') && redirectUris.length === 0)
      throw new OAuthFailure('invalid_redirect_uri', 'authorization_code needs at least one redirect URI.');
    if (!grantTypes.includes('authorization_code') && redirectUris.length > 0)
      throw new OAuthFailure('invalid_client_metadata', 'redirect_uris are only used by the authorization_code grant; add it to grant_types.');
    if (grantTypes.includes('refresh_token') && !grantTypes.includes('authorization_code')) {
      throw new OAuthFailure(
        'invalid_client_metadata',
        'refresh_token is issued only with authorization_code; client_credentials clients ask for a new token instead.',
      );
    }
    for (const uri of redirectUris) {
      const problem = redirectUriProblem(uri);
      if (problem) throw new OAuthFailure('invalid_redirect_uri', problem);
    }
    const responseTypes = request.response_types ?? (grantTypes.includes('authorization_code') ? ['code'] : []);
    if (responseTypes.some((type) => type !== 'code') || (responseTypes.includes('code') && !grantTypes.includes('authorization_code'))) {
      throw new OAuthFailure('invalid_client_metadata', 'The only response type is `code`, with the authorization_code grant.');
    }
    let scopes: Scope[];
    try {
      scopes = scopesFrom(request.scope, DEMO_TIER_SCOPES, DEMO_TIER_SCOPES);
    } catch (error) {
      throw new OAuthFailure('invalid_client_metadata', (error as Error).message);
    }
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
      resource = this.#boundResource(request.resource, undefined);
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
        return this.#authorizationCodeGrant(request, client, authenticated);
      case 'refresh_token':
        return this.#refreshTokenGrant(request, client, authenticated);
      case 'client_credentials':
        return this.#clientCredentialsGrant(request, client, authenticated);
      case undefined:
        throw new OAuthFailure('invalid_request', 'grant_type is required.');
      default:
        throw new OAuthFailure('unsupported_grant_type', `grant_type must be one of authorization_code, client_credentials, refresh_token.`);
    }
  }

  async #issue(grant: {
    subject: string;
    clientId: string;
    publicClient: boolean;
    scopes: Scope[];
    familyId: string | undefined;
    resource: string | undefined;
  }): Promise<OAuthTokenResponse> {
    const { accessTokenTtlSeconds, refreshTokenTtlSeconds } = this.#config;
    const { subject, clientId, publicClient, scopes, familyId } = grant;
    const resource = grant.resource ? { resource: grant.resource } : {};
    const access = await this.tokens.signAccess({ subject, clientId, scopes, familyId, publicClient, ...resource }, accessTokenTtlSeconds);
    const refresh = familyId
      ? await this.tokens.signRefresh({ id: newId(), clientId, publicClient, familyId, subject, scopes, ...resource }, refreshTokenTtlSeconds)
      : undefined;
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: accessTokenTtlSeconds,
      ...(refresh ? { refresh_token: refresh } : {}),
      scope: scopes.join(' '),
    };
  }

  async #authorizationCodeGrant(request: TokenRequest, client: ClientRegistration | undefined, authenticated: boolean): Promise<OAuthTokenResponse> {
    if (!request.code) throw new OAuthFailure('invalid_request', 'code is required.');
    if (!request.code_verifier) throw new OAuthFailure('invalid_request', 'code_verifier is required (PKCE).');
    let code: Awaited<ReturnType<typeof this.tokens.verifyCode>>;
    try {
      code = await this.tokens.verifyCode(request.code);
    } catch (error) {
      throw new OAuthFailure(
        'invalid_grant',
        (error as TokenRefused).reason === 'expired' ? 'The authorization code has expired.' : 'The authorization code is not valid.',
      );
    }
    if (client && client.id !== code.clientId) throw new OAuthFailure('invalid_grant', 'The authorization code was issued to another client.');
    if (!code.publicClient && !authenticated) throw new OAuthFailure('invalid_client', 'The client this code was issued to must authenticate.');
    if (request.redirect_uri !== undefined && request.redirect_uri !== code.redirectUri)
      throw new OAuthFailure('invalid_grant', 'redirect_uri differs from the one of the authorization request.');
    // Checked before the code is spent: a wrong resource leaves the code usable for a corrected retry.
    const resource = this.#boundResource(request.resource, code.resource);
    // Spend first, then check the verifier: a wrong guess burns the code (no online guessing).
    const familyId = code.id;
    if (!(await this.store.spend(code.id, 'code', familyId, code.expiresAt))) {
      // RFC 6749 4.1.2: a replayed code revokes what was issued from it.
      await this.store.revokeFamily(familyId, 'code replayed', nowSeconds() + this.#config.refreshTokenTtlSeconds);
      throw new OAuthFailure('invalid_grant', 'The authorization code was already used; tokens issued from it are revoked.');
    }
    if (!PKCE_VALUE.test(request.code_verifier) || s256(request.code_verifier) !== code.codeChallenge) {
      throw new OAuthFailure('invalid_grant', 'code_verifier does not match the code challenge.');
    }
    return this.#issue({ subject: code.subject, clientId: code.clientId, publicClient: code.publicClient, scopes: code.scopes, familyId, resource });
  }

  async #refreshTokenGrant(request: TokenRequest, client: ClientRegistration | undefined, authenticated: boolean): Promise<OAuthTokenResponse> {
    if (!request.refresh_token) throw new OAuthFailure('invalid_request', 'refresh_token is required.');
    let claims: Awaited<ReturnType<typeof this.tokens.verifyRefresh>>;
    try {
      claims = await this.tokens.verifyRefresh(request.refresh_token);
    } catch (error) {
      throw new OAuthFailure(
        'invalid_grant',
        (error as TokenRefused).reason === 'expired' ? 'The refresh token has expired.' : 'The refresh token is not valid.',
      );
    }
    if (client && client.id !== claims.clientId) throw new OAuthFailure('invalid_grant', 'The refresh token was issued to another client.');
    if (!claims.publicClient && !authenticated) throw new OAuthFailure('invalid_client', 'The client this token was issued to must authenticate.');
    const scopes = request.scope === undefined ? claims.scopes : scopesFrom(request.scope, claims.scopes, claims.scopes);
    const resource = this.#boundResource(request.resource, claims.resource);
    if (await this.store.isFamilyRevoked(claims.familyId)) throw new OAuthFailure('invalid_grant', 'This refresh token has been revoked.');
    // Rotation: each refresh token works once. A second use means it leaked: revoke the family.
    if (!(await this.store.spend(claims.id, 'refresh', claims.familyId, claims.expiresAt))) {
      await this.store.revokeFamily(claims.familyId, 'refresh token reused', nowSeconds() + this.#config.refreshTokenTtlSeconds);
      throw new OAuthFailure('invalid_grant', 'This refresh token was already used; every token of its authorization is now revoked. Sign in again.');
    }
    return this.#issue({ subject: claims.subject, clientId: claims.clientId, publicClient: claims.publicClient, scopes, familyId: claims.familyId, resource });
  }

  async #clientCredentialsGrant(request: TokenRequest, client: ClientRegistration | undefined, authenticated: boolean): Promise<OAuthTokenResponse> {
    if (!client || !authenticated) throw new OAuthFailure('invalid_client', 'client_credentials needs a client that authenticates with its secret.');
    if (!client.grantTypes.includes('client_credentials'))
      throw new OAuthFailure('unauthorized_client', 'This client is not registered for client_credentials.');
    const scopes = scopesFrom(request.scope, client.scopes, client.scopes);
    const resource = this.#boundResource(request.resource, undefined);
    // A machine client is one durable agent: its identity is its registration.
    return this.#issue({ subject: `agt_${client.id}`, clientId: client.id, publicClient: false, scopes, familyId: undefined, resource });
  }
}
