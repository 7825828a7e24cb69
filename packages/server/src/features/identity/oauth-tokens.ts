import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify, SignJWT, errors as joseErrors, type JWTPayload } from 'jose';
import { scopes as allScopes, type OAuthTokenEndpointAuthMethod, type Scope } from '@svc/schemas';
import type { KeyPurpose, SigningKeys } from '../../signing-keys.ts';

/** Random id, base64url, 128 bits. */
export const newId = (bytes = 16) => randomBytes(bytes).toString('base64url');

/** What a signed client id says: the registration itself (RFC 7591 metadata we act on). */
export interface ClientRegistration {
  /** Registration id: names the client in tokens and is the machine client's agent identity. */
  id: string;
  issuedAt: number;
  authMethod: OAuthTokenEndpointAuthMethod;
  redirectUris: string[];
  grantTypes: Array<'authorization_code' | 'client_credentials' | 'refresh_token'>;
  scopes: Scope[];
  name?: string;
}

export interface AuthorizationCode {
  id: string;
  clientId: string;
  publicClient: boolean;
  redirectUri: string;
  codeChallenge: string;
  scopes: Scope[];
  subject: string;
  /** RFC 8707 resource the authorization was granted for (svc's spelling); absent: unbound. */
  resource?: string;
}

export interface RefreshTokenClaims {
  id: string;
  clientId: string;
  publicClient: boolean;
  familyId: string;
  subject: string;
  scopes: Scope[];
  expiresAt: number;
  /** Carried through rotation: every token of the family is bound to the same resource. */
  resource?: string;
}

export interface AccessTokenClaims {
  subject: string;
  clientId: string;
  scopes: Scope[];
  /** The audience (RFC 8707 resource) the token may be used at; absent: unbound. */
  resource?: string;
  familyId?: string;
  /** Issued to a public (PKCE) client; tokens from before this claim existed read as confidential. */
  publicClient?: boolean;
}

/** What a verified access token says beyond what it was signed from: its own id and expiry. */
export interface VerifiedAccessToken extends AccessTokenClaims {
  id: string;
  expiresAt: number;
}

/** Why a signed value was refused: `expired` is worth telling apart from everything else. */
export class TokenRefused extends Error {
  readonly reason: 'expired' | 'invalid';
  constructor(reason: 'expired' | 'invalid', message: string) {
    super(message);
    this.reason = reason;
  }
}

const TYP = { client: 'svc-client+jwt', code: 'svc-code+jwt', refresh: 'svc-rt+jwt', access: 'at+jwt' } as const;

export const parseScopes = (value: unknown): Scope[] =>
  Array.isArray(value) ? value.filter((s): s is Scope => (allScopes as readonly string[]).includes(s)) : [];

/** Signs and checks every OAuth artefact; nothing here touches the database. */
export class OAuthTokens {
  readonly #keys: SigningKeys;
  readonly #issuer: () => string;

  constructor(keys: SigningKeys, issuer: () => string) {
    this.#keys = keys;
    this.#issuer = issuer;
  }

  async #sign(purpose: Exclude<KeyPurpose, 'client-secret' | 'browser-subject'>, typ: string, payload: JWTPayload, expiresInSeconds?: number): Promise<string> {
    const jwt = new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ }).setIssuedAt().setIssuer(this.#issuer());
    if (expiresInSeconds !== undefined) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSeconds);
    return jwt.sign(this.#keys.key(purpose));
  }

  async #verify(purpose: Exclude<KeyPurpose, 'client-secret' | 'browser-subject'>, typ: string, token: string): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, this.#keys.key(purpose), { algorithms: ['HS256'], typ, issuer: this.#issuer(), clockTolerance: 0 });
      return payload;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw new TokenRefused('expired', 'expired');
      throw new TokenRefused('invalid', error instanceof Error ? error.message : 'invalid');
    }
  }

  signClient(registration: Omit<ClientRegistration, 'issuedAt'>): Promise<string> {
    return this.#sign('client', TYP.client, {
      jti: registration.id,
      m: registration.authMethod,
      r: registration.redirectUris,
      g: registration.grantTypes,
      s: registration.scopes,
      ...(registration.name ? { n: registration.name } : {}),
    });
  }

  async verifyClient(clientId: string): Promise<ClientRegistration> {
    const payload = await this.#verify('client', TYP.client, clientId);
    return {
      id: String(payload.jti),
      issuedAt: Number(payload.iat),
      authMethod: payload.m as OAuthTokenEndpointAuthMethod,
      redirectUris: (payload.r as string[]) ?? [],
      grantTypes: (payload.g as ClientRegistration['grantTypes']) ?? [],
      scopes: parseScopes(payload.s),
      name: typeof payload.n === 'string' ? payload.n : undefined,
    };
  }

  /** A machine client's secret is a MAC of its registration id: nothing to store, nothing to look up. */
  clientSecret(registrationId: string): string {
    return `svc_cs_${createHmac('sha256', this.#keys.key('client-secret')).update(registrationId).digest('base64url')}`;
  }

  /**
   * The agent a browser signs in to the console as: a MAC of the browser's random id (kept in an
   * HttpOnly cookie of the authorization endpoint), so the same browser is the same agent on every
   * replica, and an agent id says nothing of the cookie that names it.
   */
  browserSubject(browserId: string): string {
    return `agt_${createHmac('sha256', this.#keys.key('browser-subject')).update(browserId).digest('base64url').slice(0, 22)}`;
  }

  checkClientSecret(registrationId: string, presented: string): boolean {
    const digest = (value: string) => createHash('sha256').update(value).digest();
    return timingSafeEqual(digest(this.clientSecret(registrationId)), digest(presented));
  }

  signCode(code: AuthorizationCode, ttlSeconds: number): Promise<string> {
    return this.#sign(
      'code',
      TYP.code,
      {
        jti: code.id,
        cid: code.clientId,
        pub: code.publicClient,
        ru: code.redirectUri,
        cc: code.codeChallenge,
        s: code.scopes,
        sub: code.subject,
        ...(code.resource ? { res: code.resource } : {}),
      },
      ttlSeconds,
    );
  }

  async verifyCode(code: string): Promise<AuthorizationCode & { expiresAt: number }> {
    const payload = await this.#verify('code', TYP.code, code);
    return {
      id: String(payload.jti),
      clientId: String(payload.cid),
      publicClient: payload.pub === true,
      redirectUri: String(payload.ru),
      codeChallenge: String(payload.cc),
      scopes: parseScopes(payload.s),
      subject: String(payload.sub),
      expiresAt: Number(payload.exp),
      ...(typeof payload.res === 'string' ? { resource: payload.res } : {}),
    };
  }

  signRefresh(claims: Omit<RefreshTokenClaims, 'expiresAt'>, ttlSeconds: number): Promise<string> {
    return this.#sign(
      'refresh',
      TYP.refresh,
      {
        jti: claims.id,
        cid: claims.clientId,
        pub: claims.publicClient,
        fid: claims.familyId,
        sub: claims.subject,
        s: claims.scopes,
        ...(claims.resource ? { res: claims.resource } : {}),
      },
      ttlSeconds,
    );
  }

  async verifyRefresh(token: string): Promise<RefreshTokenClaims> {
    const payload = await this.#verify('refresh', TYP.refresh, token);
    return {
      id: String(payload.jti),
      clientId: String(payload.cid),
      publicClient: payload.pub === true,
      familyId: String(payload.fid),
      subject: String(payload.sub),
      scopes: parseScopes(payload.s),
      expiresAt: Number(payload.exp),
      ...(typeof payload.res === 'string' ? { resource: payload.res } : {}),
    };
  }

  signAccess(claims: AccessTokenClaims, ttlSeconds: number): Promise<string> {
    return this.#sign(
      'access',
      TYP.access,
      {
        jti: newId(),
        sub: claims.subject,
        client_id: claims.clientId,
        scope: claims.scopes.join(' '),
        tier: 'demo',
        // RFC 9068: the audience is the resource the token was requested for.
        ...(claims.resource ? { aud: claims.resource } : {}),
        ...(claims.familyId ? { fid: claims.familyId } : {}),
        ...(claims.publicClient ? { pub: true } : {}),
      },
      ttlSeconds,
    );
  }

  /** Null when the token is not one of our access tokens at all (another resolver may know it). */
  static looksLikeAccessToken(token: string): boolean {
    if (token.split('.').length !== 3) return false;
    try {
      return decodeProtectedHeader(token).typ === TYP.access;
    } catch {
      return false;
    }
  }

  async verifyAccess(token: string): Promise<VerifiedAccessToken> {
    const payload = await this.#verify('access', TYP.access, token);
    return {
      id: String(payload.jti),
      expiresAt: Number(payload.exp),
      publicClient: payload.pub === true,
      subject: String(payload.sub),
      clientId: String(payload.client_id),
      scopes: typeof payload.scope === 'string' ? parseScopes(payload.scope.split(' ')) : [],
      familyId: typeof payload.fid === 'string' ? payload.fid : undefined,
      ...(typeof payload.aud === 'string' ? { resource: payload.aud } : {}),
    };
  }
}
