import type { OAuthAuthorizationServerMetadata, OAuthProtectedResourceMetadata } from '@svc/schemas';
import { mcpEndpointUrl, oauthContract, oauthGrantTypes, pathFor, systemContract, oauthTokenEndpointAuthMethods, RECEIPT_JWKS_PATH } from '@svc/schemas';
import { DEMO_TIER_SCOPES } from './oauth-service.ts';

/**
 * RFC 8414 metadata, built from the same constants the endpoints enforce. The issuer is the
 * base URL on every alias: the /mcp paths serve the one authorization server of svc.
 */
export function authorizationServerMetadata(baseUrl: string): OAuthAuthorizationServerMetadata {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}${pathFor(oauthContract.authorize)}`,
    token_endpoint: `${baseUrl}${pathFor(oauthContract.token)}`,
    registration_endpoint: `${baseUrl}${pathFor(oauthContract.register)}`,
    revocation_endpoint: `${baseUrl}${pathFor(oauthContract.revoke)}`,
    revocation_endpoint_auth_methods_supported: [...oauthTokenEndpointAuthMethods],
    scopes_supported: [...DEMO_TIER_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...oauthGrantTypes],
    token_endpoint_auth_methods_supported: [...oauthTokenEndpointAuthMethods],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${baseUrl}${pathFor(systemContract.llmsFullTxt)}`,
    jwks_uri: `${baseUrl}${RECEIPT_JWKS_PATH}`,
  };
}

/**
 * RFC 9728 metadata. `resource` names the resource where it really is: svc itself (the base URL)
 * on the plain document, the MCP endpoint on the api surface (`{api}/api/mcp`) on every MCP one,
 * so a client that compares `resource` with the endpoint it connects to finds them equal.
 */
export function protectedResourceMetadata(urls: { baseUrl: string; apiUrl: string }, resource: 'svc' | 'mcp'): OAuthProtectedResourceMetadata {
  return {
    resource: resource === 'mcp' ? mcpEndpointUrl(urls.apiUrl) : urls.baseUrl,
    authorization_servers: [urls.baseUrl],
    scopes_supported: [...DEMO_TIER_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: resource === 'mcp' ? 'svc MCP' : 'svc',
    resource_documentation: `${urls.baseUrl}${pathFor(systemContract.llmsFullTxt)}`,
  };
}
