import { z } from 'zod';
import type { EffectiveLimits } from './identity/key-limits.ts';

/** Every scope a developer key may carry (spec: inference-billing-api section 5). */
export const scopes = [
  'inference:invoke',
  'requests:read',
  'requests:write',
  'jobs:read',
  'jobs:write',
  'models:read',
  'billing:read',
  'billing:write',
] as const;
export const Scope = z.enum(scopes);
export type Scope = z.infer<typeof Scope>;

/**
 * - operator: the configured operator token; holds every scope.
 * - agent: an OAuth principal (registered through /oauth/*), its bearer or one of its developer keys.
 * - demo: the shared demo principal behind the publishable demo credential.
 * - open: a caller with no credential where the configuration allows open access.
 * - anonymous: no credential on a public route.
 */
export const principalKinds = ['operator', 'agent', 'demo', 'open', 'anonymous'] as const;
export const PrincipalKind = z.enum(principalKinds);
export type PrincipalKind = z.infer<typeof PrincipalKind>;

/** How the caller proved itself; `developer_key` is refused on bearer-only routes. */
export const credentialKinds = ['operator_token', 'oauth_access_token', 'developer_key', 'demo_token', 'none'] as const;
export type CredentialKind = (typeof credentialKinds)[number];

export interface Principal {
  readonly kind: PrincipalKind;
  /** Stable id: `operator`, the agent's subject, `demo`, `open`, or `anonymous`. */
  readonly id: string;
  readonly scopes: readonly Scope[];
  readonly credential: CredentialKind;
  /** Set when the credential is a developer key. */
  readonly developerKeyId?: string;
  /** Set for OAuth principals: the id of the registration (not the full signed client id). */
  readonly clientId?: string;
  /**
   * Set when the OAuth access token is bound to a resource (RFC 8707 `resource`, the token's
   * audience): the one URL it may be used at. Absent: a token issued without `resource`.
   */
  readonly resource?: string;
  /**
   * The limits that apply to this caller, when its resolver knows them (a developer key's own
   * limits over the defaults for keys); absent: the defaults of its principal kind apply.
   */
  readonly limits?: EffectiveLimits;
  /**
   * Set when the resolver already counted this request against the requests-per-minute limit, in
   * the query that resolved the credential (one round trip instead of two): the minute's hits so
   * far, or null when the minute was full; `windowStart` is that minute (epoch ms).
   */
  readonly requestCount?: { readonly hits: number | null; readonly windowStart: number };
}

export const anonymousPrincipal: Principal = Object.freeze({ kind: 'anonymous', id: 'anonymous', scopes: [], credential: 'none' });
