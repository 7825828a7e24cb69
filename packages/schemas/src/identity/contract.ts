import { cursorPaging } from '../cursor-paging.ts';
import { defineContract, defineRoute, empty, redirect } from '../route.ts';
import {
  CredentialIdParams,
  CredentialListQuery,
  CredentialPage,
  DeveloperCredential,
  DeveloperCredentialCreateRequest,
  DeveloperCredentialListResponse,
  DeveloperCredentialReceiptListResponse,
  DeveloperCredentialRevokeResponse,
  DeveloperCredentialSecretResponse,
  everyonesKeys,
} from './credentials.ts';
import { DeveloperCredentialUpdateRequest, KeyUsagePage, keyLimitMaximums } from './key-limits.ts';
import { KeyWebhook, KeyWebhookRemoveResponse, KeyWebhookSecretResponse, KeyWebhookSetRequest } from './key-webhook.ts';
import { MAX_USAGE_REPORT_DAYS, MAX_USAGE_REPORT_ROWS, UsageReport, UsageReportQuery } from './usage-report.ts';
import {
  OAuthAuthorizationServerMetadata,
  OAuthAuthorizeQuery,
  OAuthClientRegistrationRequest,
  OAuthClientRegistrationResponse,
  OAuthError,
  OAuthProtectedResourceMetadata,
  OAuthRevocationRequest,
  OAuthTokenRequest,
  OAuthTokenResponse,
  WhoAmIResponse,
} from './oauth.ts';

const oauthRoute = { auth: { kind: 'public' }, surface: 'base', tags: ['oauth'] } as const;
/** Endpoints OAuth clients call: every 400 is an RFC 6749 error body, even one the adapter raises. */
const oauthEndpoint = { ...oauthRoute, errorEnvelope: 'oauth' } as const;
const asMetadata = (path: string, summary: string) =>
  defineRoute({ ...oauthRoute, cors: 'any-origin', method: 'GET', path, summary, responses: { 200: OAuthAuthorizationServerMetadata } });
const prMetadata = (path: string, summary: string) =>
  defineRoute({ ...oauthRoute, cors: 'any-origin', method: 'GET', path, summary, responses: { 200: OAuthProtectedResourceMetadata } });

export const oauthContract = defineContract({
  register: defineRoute({
    ...oauthEndpoint,
    method: 'POST',
    path: '/oauth/register',
    summary: 'Register an OAuth client (RFC 7591): stateless, the client id is a signed registration',
    description:
      'Limited per client address (SVC_OAUTH_REGISTER_RATE_PER_MINUTE, counted in the database so replicas share it): past it, 429 `rate_limited` with Retry-After.',
    body: OAuthClientRegistrationRequest,
    bodyLimitBytes: 16_384,
    errors: [429],
    responses: { 201: OAuthClientRegistrationResponse, 400: OAuthError },
  }),
  authorize: defineRoute({
    ...oauthEndpoint,
    method: 'GET',
    path: '/oauth/authorize',
    summary: 'Authorization endpoint (code + PKCE S256); approves at once and redirects with a signed short-lived code',
    description: [
      '`client_id` is either a registration from `/oauth/register` or the https URL of a client ID metadata document.',
      'svc fetches such a document through its SSRF-guarded fetcher (public https hosts only, no redirects, at most 5120 bytes within 3 s), honours its HTTP caching headers',
      '(at most a day), and requires its `client_id` to equal the URL and `redirect_uri` to be one of its `redirect_uris`; otherwise 400 `invalid_client` says which rule failed.',
      'The document describes a public PKCE client (token_endpoint_auth_method `none`).',
      'Downloading a document counts as a registration under the per-address limit of `/oauth/register` (SVC_OAUTH_REGISTER_RATE_PER_MINUTE): past it, 429 `rate_limited` with Retry-After; a cached document costs nothing.',
      'Each authorization is a new agent, except a sign-in to the web console (`redirect_uri` is `{base}/ui/callback`): that is the person at this browser, one agent per browser,',
      'named by a random id in an HttpOnly `svc_browser` cookie of this endpoint (set on the redirect, renewed by each sign-in, 400 days), so signing in again is the same agent.',
    ].join(' '),
    query: OAuthAuthorizeQuery,
    errors: [429],
    responses: { 302: redirect(), 400: OAuthError },
  }),
  token: defineRoute({
    ...oauthEndpoint,
    method: 'POST',
    path: '/oauth/token',
    summary: 'Token endpoint: authorization_code, client_credentials, refresh_token; vends the demo tier',
    body: OAuthTokenRequest.default({}),
    bodyEncoding: 'form',
    bodyLimitBytes: 16_384,
    errors: [429],
    responses: { 200: OAuthTokenResponse, 400: OAuthError, 401: OAuthError },
  }),
  revoke: defineRoute({
    ...oauthEndpoint,
    method: 'POST',
    path: '/oauth/revoke',
    summary: 'Token revocation (RFC 7009): an access token, or a refresh token with every token of its authorization',
    description: [
      'Answers 200 with an empty body whether or not the token was valid, expired or already revoked (RFC 7009 2.2), so a retry is always safe.',
      'A refresh token revokes its whole family: every refresh and access token descended from the same authorization. An access token revokes only itself.',
      "Client authentication is the token endpoint's: a confidential client must authenticate (401 `invalid_client` otherwise); a token of a public client may be revoked with its client_id or with no client identification at all (holding the token is the proof).",
      "A token issued to another client than the one identified is refused with 400 `invalid_grant`. Counted with the token endpoint's per-address limit.",
    ].join(' '),
    body: OAuthRevocationRequest.default({}),
    bodyEncoding: 'form',
    bodyLimitBytes: 16_384,
    errors: [429],
    responses: { 200: empty(), 400: OAuthError, 401: OAuthError },
  }),
  authorizationServer: asMetadata('/.well-known/oauth-authorization-server', 'Authorization-server metadata (RFC 8414)'),
  authorizationServerMcp: asMetadata('/.well-known/oauth-authorization-server/mcp', 'Authorization-server metadata (RFC 8414), MCP path'),
  authorizationServerMcpPrefix: asMetadata('/mcp/.well-known/oauth-authorization-server', 'Authorization-server metadata (RFC 8414), MCP-prefixed alias'),
  protectedResource: prMetadata('/.well-known/oauth-protected-resource', 'Protected-resource metadata (RFC 9728)'),
  protectedResourceMcp: prMetadata(
    '/.well-known/oauth-protected-resource/mcp',
    'Protected-resource metadata (RFC 9728) of the base-surface MCP endpoint: `resource` is `{base}/mcp`',
  ),
  protectedResourceMcpPrefix: prMetadata(
    '/mcp/.well-known/oauth-protected-resource',
    'Protected-resource metadata (RFC 9728) of the base-surface MCP endpoint (`{base}/mcp`), prefixed alias',
  ),
  protectedResourceApiMcp: defineRoute({
    ...oauthRoute,
    surface: 'api',
    method: 'GET',
    path: '/.well-known/oauth-protected-resource/api/mcp',
    summary: 'Protected-resource metadata (RFC 9728) of the MCP endpoint, at the path-aware location an MCP client derives from {api}/api/mcp',
    description:
      'Names the resource `{api}/api/mcp`, the blackboard MCP endpoint; the `/mcp` documents of the base surface name `{base}/mcp`. A token is bound to the one resource it was issued for (RFC 8707).',
    responses: { 200: OAuthProtectedResourceMetadata },
  }),
  whoami: defineRoute({
    method: 'GET',
    path: '/v1/whoami',
    surface: 'base',
    tags: ['oauth'],
    auth: { kind: 'scoped', scopes: [] },
    summary: 'The principal, scopes and credential kind the server resolved for this caller',
    responses: { 200: WhoAmIResponse },
  }),
});

const credentialRoute = { surface: 'base', tags: ['developer-keys'], auth: { kind: 'bearer', principals: ['agent'] } } as const;

/** Developer keys (`svc keys`, `svc.developerKeys`): the contract key `developerKeys`, on the spec's `/v1/developer/credentials` paths. */
export const developerKeysContract = defineContract({
  create: defineRoute({
    ...credentialRoute,
    method: 'POST',
    path: '/v1/developer/credentials',
    summary: 'Issue a developer key; the secret is in this answer only',
    description: 'The key may carry only scopes the calling token holds: 403 `scope_not_held` names the others.',
    body: DeveloperCredentialCreateRequest,
    bodyLimitBytes: 4096,
    errors: [409],
    responses: { 201: DeveloperCredentialSecretResponse },
    agent: { callable: false, reason: 'its answer holds a new secret, which a tool transcript would keep' },
  }),
  list: defineRoute({
    ...credentialRoute,
    auth: { kind: 'bearer', principals: ['agent', 'operator'] },
    method: 'GET',
    path: '/v1/developer/credentials',
    summary: "Your developer keys (metadata only), newest first, by cursor; the operator may see every owner's",
    description:
      'Each key carries its owner, expiry, limits, when it was last used (to within the usage flush interval) and the credits it spent. ' +
      "`q` keeps the keys whose name, id or owner holds the text. With `everyone=true` the operator token sees every owner's keys; without it, the operator (who owns none) sees none.",
    query: CredentialListQuery,
    everyone: everyonesKeys,
    errors: [403],
    responses: { 200: DeveloperCredentialListResponse },
    paging: cursorPaging,
  }),
  rotate: defineRoute({
    ...credentialRoute,
    method: 'POST',
    path: '/v1/developer/credentials/:credential_id/rotate',
    summary: 'Replace a key: the old one dies and a new one is issued in one transaction',
    description:
      'The calling token must hold every scope of the key, as for creating it (403 `scope_not_held`), so a token narrowed by refresh cannot mint a wider secret.',
    params: CredentialIdParams,
    errors: [404, 409],
    responses: { 200: DeveloperCredentialSecretResponse },
    agent: { callable: false, reason: 'its answer holds a new secret, which a tool transcript would keep' },
  }),
  revoke: defineRoute({
    ...credentialRoute,
    method: 'DELETE',
    path: '/v1/developer/credentials/:credential_id',
    summary: 'Revoke a key at once; revoking again answers the same receipt',
    description:
      'The calling token must hold every scope of the key (403 `scope_not_held`). Listing keys and reading receipts need no such scopes: they carry no secret.',
    params: CredentialIdParams,
    errors: [404],
    responses: { 200: DeveloperCredentialRevokeResponse },
  }),
  update: defineRoute({
    ...credentialRoute,
    auth: { kind: 'bearer', principals: ['agent', 'operator'] },
    method: 'PATCH',
    path: '/v1/developer/credentials/:credential_id',
    summary: "Change a key's limits; the next request on every replica is held to them",
    description:
      "Body `{ limits }`: each field present replaces the key's own value, `null` clears it (the configured default for keys applies), absent fields stay. " +
      `Rates are whole numbers from 1 (requests_per_minute up to ${keyLimitMaximums.requests_per_minute}, concurrent_requests up to ${keyLimitMaximums.concurrent_requests}, tokens_per_minute up to ${keyLimitMaximums.tokens_per_minute}); ` +
      `credit caps from 0 (credits_per_day up to ${keyLimitMaximums.credits_per_day}, credits_per_month up to ${keyLimitMaximums.credits_per_month}). Any other value is 422 naming the field. ` +
      'The owner changes its own keys (a key of another owner is 404); the operator token changes any key. The calling token must hold every scope of the key, as for rotating or revoking it (403 `scope_not_held`), so a token narrowed by refresh cannot raise the limits of a wider key. ' +
      'Any status may be changed; limits of a revoked key no longer matter.',
    params: CredentialIdParams,
    body: DeveloperCredentialUpdateRequest,
    bodyLimitBytes: 4096,
    errors: [404],
    responses: { 200: DeveloperCredential },
  }),
  usage: defineRoute({
    ...credentialRoute,
    auth: { kind: 'bearer', principals: ['agent', 'operator'] },
    method: 'GET',
    path: '/v1/developer/credentials/:credential_id/usage',
    summary: 'What a key used, per UTC day and model: inference calls, upstream tokens, credits spent; newest day first, by cursor',
    description:
      'Calls count when their answer is over (a failed call counts, with the tokens it used); credits count when committed, so a released hold never shows. The operator token reads any key.',
    params: CredentialIdParams,
    query: CredentialPage,
    errors: [404],
    responses: { 200: KeyUsagePage },
    paging: cursorPaging,
  }),
  usageReport: defineRoute({
    ...credentialRoute,
    auth: { kind: 'bearer', principals: ['operator'] },
    method: 'GET',
    path: '/v1/developer/usage',
    summary: "Every developer key's use over a range of UTC days, per day, per model and per key (the operator's usage report)",
    description:
      `\`from\` and \`to\` are UTC days (YYYY-MM-DD), both included; by default the 30 days up to today. A range longer than ${MAX_USAGE_REPORT_DAYS} days, or \`from\` after \`to\`, is 422. ` +
      `Models and keys are listed busiest first (credits, then calls), at most ${MAX_USAGE_REPORT_ROWS} of each; \`models_truncated\` and \`keys_truncated\` say when more were used. ` +
      'Summed from the per-key, per-day, per-model usage rows (calls and tokens when a call ends, credits when committed); the operator token only.',
    query: UsageReportQuery,
    responses: { 200: UsageReport },
  }),
  setWebhook: defineRoute({
    ...credentialRoute,
    method: 'PUT',
    path: '/v1/developer/credentials/:credential_id/webhook',
    summary: "Set the key's webhook endpoint: its background responses are announced there, signed with a new secret shown in this answer only",
    description: [
      'Each background response made with this key is announced, when it ends, to this https endpoint as OpenAI announces it (`response.completed`, `.failed`, `.cancelled`, `.incomplete`),',
      "signed per Standard Webhooks with the key's own secret (verify with openai's `client.webhooks.unwrap`), retried with backoff and recorded, as the operator's endpoint (SVC_RESPONSES_WEBHOOK_URL) is;",
      "the operator's endpoint, if set, gets them too. Setting it again replaces the URL and makes a new secret: deliveries not yet sent go to the new endpoint under the new secret.",
      'The host must resolve only to public unicast addresses (the rules of a PDF fetched by URL, checked now and at each delivery): otherwise 422 `source_url_refused`, or `source_fetch_failed` when it does not resolve.',
      "A rotated key's successor keeps its endpoint until it sets its own. Only an active key of yours (404 `credential_not_found`, 409 `credential_revoked`), with a token that holds every scope of the key (403 `scope_not_held`).",
    ].join(' '),
    params: CredentialIdParams,
    body: KeyWebhookSetRequest,
    bodyLimitBytes: 4096,
    errors: [404, 409],
    responses: { 200: KeyWebhookSecretResponse },
    agent: { callable: false, reason: 'its answer holds a new secret, which a tool transcript would keep' },
  }),
  webhook: defineRoute({
    ...credentialRoute,
    method: 'GET',
    path: '/v1/developer/credentials/:credential_id/webhook',
    summary: "The key's webhook endpoint, never its secret",
    params: CredentialIdParams,
    errors: [404],
    responses: { 200: KeyWebhook },
    agent: { callable: false, reason: 'a key webhook is set outside tools (its answer holds a secret), so it is read and removed there too' },
  }),
  removeWebhook: defineRoute({
    ...credentialRoute,
    method: 'DELETE',
    path: '/v1/developer/credentials/:credential_id/webhook',
    summary: "Remove the key's webhook endpoint; its deliveries not yet sent fail",
    params: CredentialIdParams,
    errors: [404],
    responses: { 200: KeyWebhookRemoveResponse },
    agent: { callable: false, reason: 'a key webhook is set outside tools (its answer holds a secret), so it is read and removed there too' },
  }),
  receipts: defineRoute({
    ...credentialRoute,
    method: 'GET',
    path: '/v1/developer/credentials/:credential_id/receipts',
    summary: 'Append-only lifecycle receipts of a key, oldest first, by cursor',
    params: CredentialIdParams,
    query: CredentialPage,
    errors: [404],
    responses: { 200: DeveloperCredentialReceiptListResponse },
    paging: cursorPaging,
  }),
});

/** @deprecated The former name of `developerKeysContract` (docs/contributing.md, "Names"), kept for code written against it. */
export const credentialsContract = developerKeysContract;
