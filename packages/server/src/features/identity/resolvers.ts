import { createHash, hash, timingSafeEqual } from 'node:crypto';
import type { EffectiveLimits, Principal, Scope } from '@svc/schemas';
import type { PrincipalResolver } from '../../http/auth.ts';
import { ServiceError } from '../../service-error.ts';
import type { CredentialCache } from './credential-cache.ts';
import type { DeveloperKeyService } from './developer-key-service.ts';
import { looksLikeDeveloperKey, parseDeveloperKey } from './developer-key-format.ts';
import { effectiveKeyLimits } from './limits-config.ts';
import { OAuthTokens } from './oauth-tokens.ts';
import type { OAuthStore } from './oauth-store.ts';

/** SHA-256 in one call (`crypto.hash`): no Hash object per request, as `createHash` makes. */
const hash256 = (token: string) => hash('sha256', token, 'hex');

const minuteStart = (ms: number) => ms - (ms % 60_000);

const invalid = (message: string) => new ServiceError('invalid_token', message);

/** A verified access token as the credential cache keeps it: its principal, and what its revocation is looked up by. */
export interface CachedAccessToken {
  principal: Principal;
  tokenId: string;
  familyId: string | undefined;
  notAfter: number;
}

/**
 * OAuth access tokens -> agent principal. A token of another kind answers null so other
 * resolvers may know it; one of ours that is expired, forged or of a revoked family is refused.
 * A verified token is kept in `cache` (by its SHA-256) until its own expiry at the latest, so
 * neither its signature nor its revocation is checked again while no revocation was announced.
 */
export function accessTokenResolver(tokens: OAuthTokens, store: OAuthStore, cache?: CredentialCache<CachedAccessToken>): PrincipalResolver {
  return {
    name: 'oauth-access-token',
    async resolve(token) {
      // A token the cache holds was verified as one of ours, so a hit skips decoding its JOSE
      // header (about 25 µs a call in a profile of the agent path). Only what may be a JWT (its
      // header is base64url JSON, "eyJ...") is hashed, so other credentials pay nothing here.
      const hash = cache && token.startsWith('eyJ') ? hash256(token) : '';
      const cached = hash ? cache!.get(hash) : undefined;
      if (cached) {
        cache!.refresh(hash, async () =>
          (await store.isAccessTokenRevoked(cached.tokenId, cached.familyId)) ? undefined : { value: cached, notAfter: cached.notAfter },
        );
        return cached.principal;
      }
      if (!OAuthTokens.looksLikeAccessToken(token)) return null;
      const generation = cache?.generation ?? 0;
      let claims: Awaited<ReturnType<typeof tokens.verifyAccess>>;
      try {
        claims = await tokens.verifyAccess(token);
      } catch (error) {
        throw invalid((error as { reason?: string }).reason === 'expired' ? 'The access token has expired; refresh it.' : 'The access token is not valid.');
      }
      if (await store.isAccessTokenRevoked(claims.id, claims.familyId)) throw invalid('The access token was revoked.');
      const principal: Principal = {
        kind: 'agent',
        id: claims.subject,
        scopes: claims.scopes,
        credential: 'oauth_access_token',
        clientId: claims.clientId,
        ...(claims.resource ? { resource: claims.resource } : {}),
      };
      // Shared by the requests the cache serves: frozen, as the operator's is.
      Object.freeze(principal);
      if (hash)
        cache!.set(hash, { principal, tokenId: claims.id, familyId: claims.familyId, notAfter: claims.expiresAt * 1000 }, generation, claims.expiresAt * 1000);
      return principal;
    },
  };
}

/**
 * Developer keys -> the owning agent, with the key's scopes and limits (its own over the defaults
 * for keys, read in the same query). Revoked and rotated keys fail at once.
 */
export function developerKeyResolver(keys: DeveloperKeyService, keyDefaults: EffectiveLimits): PrincipalResolver {
  return {
    name: 'developer-key',
    async resolve(token, hints) {
      if (!looksLikeDeveloperKey(token)) return null;
      const parsed = parseDeveloperKey(token);
      if (!parsed) throw invalid('The developer key is malformed (bad length or checksum).');
      const windowStart = hints?.countRequest ? minuteStart(Date.now()) : undefined;
      const found = await keys.resolve(
        parsed.credentialId,
        token,
        windowStart === undefined ? undefined : { defaultLimit: keyDefaults.requests_per_minute, windowStart: new Date(windowStart) },
      );
      if (!found) throw invalid('The developer key is unknown, revoked or rotated.');
      const principal: Principal = {
        kind: 'agent',
        id: found.owner,
        scopes: found.scopes,
        credential: 'developer_key',
        developerKeyId: parsed.credentialId,
        limits: effectiveKeyLimits(found.limits, keyDefaults),
        ...(found.counted && windowStart !== undefined ? { requestCount: { hits: found.counted.hits, windowStart } } : {}),
      };
      return principal;
    },
  };
}

/**
 * The shared demo principal behind a publishable credential (SVC_DEMO_TOKEN): anyone may use it,
 * so it carries only SVC_DEMO_SCOPES and can never own keys (credential routes serve agents only).
 */
export function demoTokenResolver(demoToken: string, scopes: readonly Scope[]): PrincipalResolver {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  const expected = digest(demoToken);
  const demo: Principal = Object.freeze({ kind: 'demo', id: 'demo', scopes: [...scopes], credential: 'demo_token' });
  return {
    name: 'demo-token',
    async resolve(token) {
      return timingSafeEqual(digest(token), expected) ? demo : null;
    },
  };
}
