import type { OAuthClientRegistrationRequest, Scope } from '@svc/schemas';
import { DEMO_TIER_SCOPES, OAuthFailure, redirectUriProblem, scopesFrom } from './oauth-rules.ts';
import type { ClientRegistration } from './oauth-tokens.ts';

/** What a dynamic registration (RFC 7591) asks for, with every default filled in and checked. */
export interface ClientMetadata {
  authMethod: ClientRegistration['authMethod'];
  publicClient: boolean;
  redirectUris: string[];
  grantTypes: ClientRegistration['grantTypes'];
  responseTypes: string[];
  scopes: Scope[];
}

/**
 * The registration's metadata, defaults applied: a client with redirect URIs is public unless it
 * says otherwise, and its grants follow from that. Every combination that cannot work is refused
 * here, with the RFC 7591 code, before anything is signed.
 */
export function clientMetadataOf(request: OAuthClientRegistrationRequest): ClientMetadata {
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
  return { authMethod, publicClient, redirectUris, grantTypes, responseTypes, scopes };
}
