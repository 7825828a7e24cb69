import type { OAuthAuthorizationServerMetadata, OAuthProtectedResourceMetadata } from '@svc/schemas';
import {
  baseMcpEndpointUrl,
  mcpEndpointUrl,
  oauthContract,
  oauthGrantTypes,
  pathFor,
  systemContract,
  oauthTokenEndpointAuthMethods,
  RECEIPT_JWKS_PATH,
} from '@svc/schemas';
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
    client_id_metadata_document_supported: true,
  };
}

/**
 * RFC 9728 metadata. `resource` names the resource the document is about, so a client that
 * compares it with the endpoint it connects to finds them equal: svc itself (the base URL) on the
 * plain document, the base-surface MCP endpoint `{base}/mcp` on `/.well-known/oauth-protected-resource/mcp`
 * and its `/mcp/.well-known/` alias, the blackboard's `{api}/api/mcp` on the api surface's document.
 */
export function protectedResourceMetadata(urls: { baseUrl: string; apiUrl: string }, resource: 'svc' | 'mcp' | 'api-mcp'): OAuthProtectedResourceMetadata {
  const url = { svc: urls.baseUrl, mcp: baseMcpEndpointUrl(urls.baseUrl), 'api-mcp': mcpEndpointUrl(urls.apiUrl) }[resource];
  return {
    resource: url,
    authorization_servers: [urls.baseUrl],
    scopes_supported: [...DEMO_TIER_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: { svc: 'svc', mcp: 'svc MCP', 'api-mcp': 'svc blackboard MCP' }[resource],
    resource_documentation: `${urls.baseUrl}${pathFor(systemContract.llmsFullTxt)}`,
  };
}
