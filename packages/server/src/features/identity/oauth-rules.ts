import type { Scope } from '@svc/schemas';
import { scopes as allScopes } from '@svc/schemas';

/** The rules every kind of OAuth client is held to (registered or described by a metadata document). */

/** Every scope an OAuth grant may carry: the demo tier holds them all, under the per-IP limit. */
export const DEMO_TIER_SCOPES: readonly Scope[] = allScopes;

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'invalid_target';

/** An RFC 6749 / 7591 error; the handlers render it the way the RFC wants. */
export class OAuthFailure extends Error {
  readonly error: OAuthErrorCode;
  constructor(error: OAuthErrorCode, description: string) {
    super(description);
    this.error = error;
  }
}

/** Redirect URIs we accept: https anywhere, http only on loopback (RFC 8252), private-use schemes with a dot. */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri} is not an absolute URI`;
  }
  if (url.hash) return 'a redirect URI must not have a fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:')
    return ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname) ? undefined : 'http redirect URIs must use a loopback host (127.0.0.1, [::1], localhost)';
  if (/^[a-z][a-z0-9+-]*\.[a-z0-9+.-]+:$/i.test(url.protocol)) return undefined;
  return `the scheme ${url.protocol} is not accepted; use https, loopback http or a private-use scheme such as com.example.app:`;
}

export function scopesFrom(value: string | undefined, allowed: readonly Scope[], fallback: readonly Scope[]): Scope[] {
  if (value === undefined || value.trim() === '') return [...fallback];
  const requested = [...new Set(value.trim().split(/\s+/))];
  const unknown = requested.filter((scope) => !allowed.includes(scope as Scope));
  if (unknown.length > 0) throw new OAuthFailure('invalid_scope', `Scope not available: ${unknown.join(' ')}. Available: ${allowed.join(' ')}.`);
  return requested as Scope[];
}
