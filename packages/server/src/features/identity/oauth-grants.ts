import { createHash } from 'node:crypto';
import type { OAuthTokenResponse, Scope } from '@svc/schemas';
import type { IdentityConfig } from './identity-config.ts';
import { OAuthFailure, scopesFrom } from './oauth-rules.ts';
import type { OAuthStore } from './oauth-store.ts';
import { newId, type ClientRegistration, type OAuthTokens, type TokenRefused } from './oauth-tokens.ts';
import { matchResource, svcResources } from './resource-indicators.ts';

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;
export const nowSeconds = () => Math.floor(Date.now() / 1000);

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
 * The RFC 8707 resource a grant is bound to: svc's spelling of the requested one, or the one the
 * authorization already carries. A request may repeat that one or bind an unbound grant, never
 * switch it (a token for one resource must not be turned into a token for another).
 */
export function boundResource(
  asked: string | string[] | undefined,
  granted: string | undefined,
  urls: { baseUrl: string; apiUrl: string },
): string | undefined {
  if (asked === undefined) return granted;
  const distinct = [...new Set(typeof asked === 'string' ? [asked] : asked)];
  if (distinct.length > 1)
    throw new OAuthFailure(
      'invalid_target',
      `A token is bound to one resource; ask for one of ${distinct.map((value) => JSON.stringify(value.slice(0, 200))).join(', ')}.`,
    );
  const requested = distinct[0]!;
  const resource = matchResource(requested, urls);
  if (resource === undefined) {
    throw new OAuthFailure(
      'invalid_target',
      `resource ${JSON.stringify(requested.slice(0, 200))} is not served here; ask for one of ${svcResources(urls).join(', ')}.`,
    );
  }
  if (granted !== undefined && granted !== resource)
    throw new OAuthFailure('invalid_target', `This authorization is bound to the resource ${granted}; ask for it, or omit resource.`);
  return resource;
}

/** A presented code or refresh token's claims; one that fails its check is `invalid_grant`, saying whether it expired. */
async function verifiedGrant<T>(verifying: Promise<T>, what: string): Promise<T> {
  try {
    return await verifying;
  } catch (error) {
    throw new OAuthFailure('invalid_grant', (error as TokenRefused).reason === 'expired' ? `${what} has expired.` : `${what} is not valid.`);
  }
}

/**
 * The token endpoint's three grants (RFC 6749 4.1, 4.4, 6), once the client is authenticated:
 * each checks what it was given, spends what works once, and issues the tokens.
 */
export class OAuthGrants {
  readonly #tokens: OAuthTokens;
  readonly #store: OAuthStore;
  readonly #config: IdentityConfig;
  readonly #publicUrls: () => { baseUrl: string; apiUrl: string };

  constructor(options: { tokens: OAuthTokens; store: OAuthStore; config: IdentityConfig; publicUrls: () => { baseUrl: string; apiUrl: string } }) {
    this.#tokens = options.tokens;
    this.#store = options.store;
    this.#config = options.config;
    this.#publicUrls = options.publicUrls;
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
    const access = await this.#tokens.signAccess({ subject, clientId, scopes, familyId, publicClient, ...resource }, accessTokenTtlSeconds);
    const refresh = familyId
      ? await this.#tokens.signRefresh({ id: newId(), clientId, publicClient, familyId, subject, scopes, ...resource }, refreshTokenTtlSeconds)
      : undefined;
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: accessTokenTtlSeconds,
      ...(refresh ? { refresh_token: refresh } : {}),
      scope: scopes.join(' '),
    };
  }

  async authorizationCode(request: TokenRequest, client: ClientRegistration | undefined, authenticated: boolean): Promise<OAuthTokenResponse> {
    if (!request.code) throw new OAuthFailure('invalid_request', 'code is required.');
    if (!request.code_verifier) throw new OAuthFailure('invalid_request', 'code_verifier is required (PKCE).');
    const code = await verifiedGrant(this.#tokens.verifyCode(request.code), 'The authorization code');
    if (client && client.id !== code.clientId) throw new OAuthFailure('invalid_grant', 'The authorization code was issued to another client.');
    if (!code.publicClient && !authenticated) throw new OAuthFailure('invalid_client', 'The client this code was issued to must authenticate.');
    if (request.redirect_uri !== undefined && request.redirect_uri !== code.redirectUri)
      throw new OAuthFailure('invalid_grant', 'redirect_uri differs from the one of the authorization request.');
    // Checked before the code is spent: a wrong resource leaves the code usable for a corrected retry.
    const resource = boundResource(request.resource, code.resource, this.#publicUrls());
    // Spend first, then check the verifier: a wrong guess burns the code (no online guessing).
    const familyId = code.id;
    if (!(await this.#store.spend(code.id, 'code', familyId, code.expiresAt))) {
      // RFC 6749 4.1.2: a replayed code revokes what was issued from it.
      await this.#store.revokeFamily(familyId, 'code replayed', nowSeconds() + this.#config.refreshTokenTtlSeconds);
      throw new OAuthFailure('invalid_grant', 'The authorization code was already used; tokens issued from it are revoked.');
    }
    if (!PKCE_VALUE.test(request.code_verifier) || s256(request.code_verifier) !== code.codeChallenge) {
      throw new OAuthFailure('invalid_grant', 'code_verifier does not match the code challenge.');
    }
    return this.#issue({ subject: code.subject, clientId: code.clientId, publicClient: code.publicClient, scopes: code.scopes, familyId, resource });
  }

  async refreshToken(request: TokenRequest, client: ClientRegistration | undefined, authenticated: boolean): Promise<OAuthTokenResponse> {
    if (!request.refresh_token) throw new OAuthFailure('invalid_request', 'refresh_token is required.');
    const claims = await verifiedGrant(this.#tokens.verifyRefresh(request.refresh_token), 'The refresh token');
    if (client && client.id !== claims.clientId) throw new OAuthFailure('invalid_grant', 'The refresh token was issued to another client.');
    if (!claims.publicClient && !authenticated) throw new OAuthFailure('invalid_client', 'The client this token was issued to must authenticate.');
    const scopes = request.scope === undefined ? claims.scopes : scopesFrom(request.scope, claims.scopes, claims.scopes);
    const resource = boundResource(request.resource, claims.resource, this.#publicUrls());
    if (await this.#store.isFamilyRevoked(claims.familyId)) throw new OAuthFailure('invalid_grant', 'This refresh token has been revoked.');
    // Rotation: each refresh token works once. A second use means it leaked: revoke the family.
    if (!(await this.#store.spend(claims.id, 'refresh', claims.familyId, claims.expiresAt))) {
      await this.#store.revokeFamily(claims.familyId, 'refresh token reused', nowSeconds() + this.#config.refreshTokenTtlSeconds);
      throw new OAuthFailure('invalid_grant', 'This refresh token was already used; every token of its authorization is now revoked. Sign in again.');
    }
    return this.#issue({ subject: claims.subject, clientId: claims.clientId, publicClient: claims.publicClient, scopes, familyId: claims.familyId, resource });
  }

  async clientCredentials(request: TokenRequest, client: ClientRegistration | undefined, authenticated: boolean): Promise<OAuthTokenResponse> {
    if (!client || !authenticated) throw new OAuthFailure('invalid_client', 'client_credentials needs a client that authenticates with its secret.');
    if (!client.grantTypes.includes('client_credentials'))
      throw new OAuthFailure('unauthorized_client', 'This client is not registered for client_credentials.');
    const scopes = scopesFrom(request.scope, client.scopes, client.scopes);
    const resource = boundResource(request.resource, undefined, this.#publicUrls());
    // A machine client is one durable agent: its identity is its registration.
    return this.#issue({ subject: `agt_${client.id}`, clientId: client.id, publicClient: false, scopes, familyId: undefined, resource });
  }
}
