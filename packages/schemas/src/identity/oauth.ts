import { z } from 'zod';
import { scopes } from '../principal.ts';

/** Grant types the token endpoint serves; the metadata documents advertise exactly these. */
export const oauthGrantTypes = ['authorization_code', 'client_credentials', 'refresh_token'] as const;
/** Client authentication methods at the token endpoint; `none` is a public (PKCE) client. */
export const oauthTokenEndpointAuthMethods = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type OAuthTokenEndpointAuthMethod = (typeof oauthTokenEndpointAuthMethods)[number];

/** RFC 6749 section 5.2 and RFC 7591 section 3.2.2 error codes. */
export const oauthErrorCodes = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'unsupported_response_type',
  'invalid_scope',
  'access_denied',
  'server_error',
  'invalid_redirect_uri',
  'invalid_client_metadata',
  'invalid_target',
] as const;

/**
 * Bounds of a client ID metadata document (the client_id is an https URL naming a JSON document
 * of the client's metadata): svc fetches it through the SSRF-guarded fetcher under these caps.
 * 5 KiB is the size the document's specification suggests an authorization server accept.
 */
export const clientMetadataDocumentLimits = { maxBytes: 5120, timeoutMs: 3000, maxCacheSeconds: 86_400, maxCachedDocuments: 1000 } as const;

const resourceDescription =
  "RFC 8707 resource indicator: the URL the token will be used at. Accepted: the base URL (svc's REST API), `{base}/mcp` or `{api}/api/mcp`; " +
  'anything else is `invalid_target`. The issued access token is bound to it (its audience), refresh tokens carry it, and `/mcp` refuses a token bound elsewhere. ' +
  'Omitted: the token is bound to no resource and is accepted everywhere, as before resource indicators existed. ' +
  'A token is bound to one resource: the parameter repeated with different values is `invalid_target` (repeating the same value is accepted).';
/** RFC 8707 lets `resource` repeat; up to 10 values are read, so the refusal can say why. */
const ResourceParameter = z.union([z.string().max(2048), z.array(z.string().max(2048)).min(1).max(10)]);

/**
 * An OAuth error as the RFCs write it: `error` is the machine code (RFC 6749 5.2), unlike the
 * rest of svc where `error` is the message; `code` and `request_id` are added for support.
 */
export const OAuthError = z
  .object({
    error: z.enum(oauthErrorCodes),
    error_description: z.string(),
    code: z.string(),
    request_id: z.string(),
  })
  .meta({ id: 'OAuthError' });
export type OAuthError = z.infer<typeof OAuthError>;

/** RFC 7591 client metadata. Unknown members are ignored, as the RFC asks. */
export const OAuthClientRegistrationRequest = z
  .looseObject({
    redirect_uris: z.array(z.string().max(2048)).max(10).optional().describe('Exact redirect URIs; required for authorization_code'),
    token_endpoint_auth_method: z
      .enum(oauthTokenEndpointAuthMethods)
      .optional()
      .describe('`none` (default when redirect URIs are given) registers a public PKCE client; a secret method registers a machine client'),
    grant_types: z.array(z.enum(oauthGrantTypes)).max(3).optional(),
    response_types: z.array(z.string().max(32)).max(3).optional(),
    client_name: z.string().max(200).optional(),
    client_uri: z.string().max(2048).optional(),
    scope: z.string().max(400).optional(),
    software_id: z.string().max(200).optional(),
    software_version: z.string().max(100).optional(),
  })
  .meta({ id: 'OAuthClientRegistrationRequest' });
export type OAuthClientRegistrationRequest = z.input<typeof OAuthClientRegistrationRequest>;

/** RFC 7591 section 3.2.1 answer. `client_id` is the signed, self-contained registration. */
export const OAuthClientRegistrationResponse = z
  .object({
    client_id: z.string(),
    client_id_issued_at: z.number().int(),
    client_secret: z.string().optional(),
    client_secret_expires_at: z.number().int().optional().describe('0: the secret does not expire'),
    redirect_uris: z.array(z.string()).optional(),
    token_endpoint_auth_method: z.enum(oauthTokenEndpointAuthMethods),
    grant_types: z.array(z.enum(oauthGrantTypes)),
    response_types: z.array(z.string()),
    client_name: z.string().optional(),
    scope: z.string(),
  })
  .meta({ id: 'OAuthClientRegistrationResponse' });
export type OAuthClientRegistrationResponse = z.infer<typeof OAuthClientRegistrationResponse>;

/** Authorization request (RFC 6749 4.1.1 with RFC 7636). Checked by the endpoint so errors follow the RFC. */
export const OAuthAuthorizeQuery = z
  .looseObject({
    response_type: z.string().optional(),
    client_id: z.string().optional(),
    redirect_uri: z.string().optional(),
    scope: z.string().optional(),
    state: z.string().optional(),
    code_challenge: z.string().optional(),
    code_challenge_method: z.string().optional(),
    resource: ResourceParameter.optional().describe(resourceDescription),
  })
  .meta({ id: 'OAuthAuthorizeQuery' });

/** Token request, form-encoded (RFC 6749 4.1.3, 4.4.2, 6). Checked by the endpoint so errors follow the RFC. */
export const OAuthTokenRequest = z
  .looseObject({
    grant_type: z.string().optional(),
    code: z.string().optional(),
    redirect_uri: z.string().optional(),
    code_verifier: z.string().optional(),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    refresh_token: z.string().optional(),
    scope: z.string().optional(),
    resource: ResourceParameter.optional().describe(
      `${resourceDescription} With authorization_code and refresh_token it may only repeat the resource the authorization was bound to (or bind an unbound one); another is \`invalid_target\`.`,
    ),
  })
  .meta({ id: 'OAuthTokenRequest' });
export type OAuthTokenRequest = z.input<typeof OAuthTokenRequest>;

/** Revocation request (RFC 7009 2.1), form-encoded; client authentication as at the token endpoint. */
export const OAuthRevocationRequest = z
  .looseObject({
    token: z.string().optional().describe('The access or refresh token to revoke'),
    token_type_hint: z.string().optional().describe('`access_token` or `refresh_token`; only a hint, any other value is ignored'),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
  })
  .meta({ id: 'OAuthRevocationRequest' });
export type OAuthRevocationRequest = z.input<typeof OAuthRevocationRequest>;

export const OAuthTokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    expires_in: z.number().int().positive(),
    refresh_token: z.string().optional(),
    scope: z.string(),
  })
  .meta({ id: 'OAuthTokenResponse' });
export type OAuthTokenResponse = z.infer<typeof OAuthTokenResponse>;

/** RFC 8414 authorization-server metadata. */
export const OAuthAuthorizationServerMetadata = z
  .looseObject({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    registration_endpoint: z.string(),
    revocation_endpoint: z.string().optional(),
    revocation_endpoint_auth_methods_supported: z.array(z.enum(oauthTokenEndpointAuthMethods)).optional(),
    scopes_supported: z.array(z.enum(scopes)),
    response_types_supported: z.array(z.string()),
    response_modes_supported: z.array(z.string()),
    grant_types_supported: z.array(z.enum(oauthGrantTypes)),
    token_endpoint_auth_methods_supported: z.array(z.enum(oauthTokenEndpointAuthMethods)),
    code_challenge_methods_supported: z.array(z.literal('S256')),
    authorization_response_iss_parameter_supported: z.boolean(),
    service_documentation: z.string().optional(),
    jwks_uri: z.string().optional().describe('The receipt keys (JWKS): receipts svc signs verify against these'),
    client_id_metadata_document_supported: z
      .boolean()
      .optional()
      .describe('true: a client may use an https URL of its metadata document as client_id instead of registering'),
  })
  .meta({ id: 'OAuthAuthorizationServerMetadata' });
export type OAuthAuthorizationServerMetadata = z.infer<typeof OAuthAuthorizationServerMetadata>;

/** RFC 9728 protected-resource metadata. */
export const OAuthProtectedResourceMetadata = z
  .looseObject({
    resource: z.string(),
    authorization_servers: z.array(z.string()),
    scopes_supported: z.array(z.enum(scopes)),
    bearer_methods_supported: z.array(z.literal('header')),
    resource_name: z.string(),
    resource_documentation: z.string().optional(),
  })
  .meta({ id: 'OAuthProtectedResourceMetadata' });
export type OAuthProtectedResourceMetadata = z.infer<typeof OAuthProtectedResourceMetadata>;

/** Who the caller is, as the server resolved its credential (`GET /v1/whoami`). */
export const WhoAmIResponse = z
  .object({
    kind: z.enum(['operator', 'agent', 'demo', 'open', 'anonymous']),
    id: z.string(),
    scopes: z.array(z.enum(scopes)),
    credential: z.enum(['operator_token', 'oauth_access_token', 'developer_key', 'demo_token', 'none']),
    credential_id: z.string().optional(),
    client_id: z.string().optional(),
    resource: z.string().optional().describe('The resource (RFC 8707) the OAuth access token is bound to; absent when unbound'),
  })
  .meta({ id: 'WhoAmIResponse' });

/**
 * A client ID metadata document: the JSON an https `client_id` URL serves, RFC 7591 metadata of a
 * public client. `client_id` must equal the URL it was fetched from. Unknown members are ignored.
 */
export const OAuthClientMetadataDocument = z.looseObject({
  client_id: z.string().max(2048),
  redirect_uris: z.array(z.string().max(2048)).min(1).max(10),
  token_endpoint_auth_method: z
    .literal('none', { error: 'a client ID metadata document describes a public client: token_endpoint_auth_method must be `none` or absent' })
    .optional(),
  grant_types: z
    .array(z.enum(['authorization_code', 'refresh_token']))
    .max(2)
    .optional(),
  response_types: z.array(z.literal('code')).max(1).optional(),
  client_name: z.string().max(200).optional(),
  client_uri: z.string().max(2048).optional(),
  logo_uri: z.string().max(2048).optional(),
  scope: z.string().max(400).optional(),
});
export type OAuthClientMetadataDocument = z.infer<typeof OAuthClientMetadataDocument>;
export type WhoAmIResponse = z.infer<typeof WhoAmIResponse>;
