// Written by packages/client/scripts/build-operation-types.ts from the contract; do not edit.
import type { ClientRequest, ClientResponse, Contract } from '@svc/schemas';
import type { ItemOf } from './derive.ts';
import type { ItemWalkOptions, PageWalkOptions } from './paging.ts';
import type { CallOptions } from './transport.ts';

/** The request of `system.root` (GET /). */
export type SystemRootRequest = ClientRequest<Contract['system']['root']>;
/** The answer of `system.root`: Service root: liveness and self-description */
export type SystemRootResponse = ClientResponse<Contract['system']['root']>;
/** The request of `system.healthz` (GET /healthz). */
export type SystemHealthzRequest = ClientRequest<Contract['system']['healthz']>;
/** The answer of `system.healthz`: Liveness and database reachability */
export type SystemHealthzResponse = ClientResponse<Contract['system']['healthz']>;
/** The request of `system.readyz` (GET /readyz). */
export type SystemReadyzRequest = ClientRequest<Contract['system']['readyz']>;
/** The answer of `system.readyz`: Readiness: 200 while taking new work; 503 at once when a shutdown begins (SIGTERM) or the database is unreachable */
export type SystemReadyzResponse = ClientResponse<Contract['system']['readyz']>;
/** The request of `system.health` (GET /health). */
export type SystemHealthRequest = ClientRequest<Contract['system']['health']>;
/** The answer of `system.health`: Liveness and database reachability (alias of /healthz) */
export type SystemHealthResponse = ClientResponse<Contract['system']['health']>;
/** The request of `system.apiHealth` (GET /api/health). */
export type SystemApiHealthRequest = ClientRequest<Contract['system']['apiHealth']>;
/** The answer of `system.apiHealth`: Liveness of the api surface */
export type SystemApiHealthResponse = ClientResponse<Contract['system']['apiHealth']>;
/** The request of `system.openapi` (GET /openapi.json). */
export type SystemOpenapiRequest = ClientRequest<Contract['system']['openapi']>;
/** The answer of `system.openapi`: OpenAPI 3.1 document generated from the contract */
export type SystemOpenapiResponse = ClientResponse<Contract['system']['openapi']>;
/** The request of `system.llmsTxt` (GET /llms.txt). */
export type SystemLlmsTxtRequest = ClientRequest<Contract['system']['llmsTxt']>;
/** The answer of `system.llmsTxt`: Plain-text pointer for agents */
export type SystemLlmsTxtResponse = ClientResponse<Contract['system']['llmsTxt']>;
/** The request of `system.agentsTxt` (GET /agents.txt). */
export type SystemAgentsTxtRequest = ClientRequest<Contract['system']['agentsTxt']>;
/** The answer of `system.agentsTxt`: Plain-text pointer for agents (same body as /llms.txt) */
export type SystemAgentsTxtResponse = ClientResponse<Contract['system']['agentsTxt']>;
/** The request of `system.llmsFullTxt` (GET /llms-full.txt). */
export type SystemLlmsFullTxtRequest = ClientRequest<Contract['system']['llmsFullTxt']>;
/** The answer of `system.llmsFullTxt`: Every operation with its method, path, auth and summary */
export type SystemLlmsFullTxtResponse = ClientResponse<Contract['system']['llmsFullTxt']>;
/** The request of `system.performance` (GET /.well-known/performance). */
export type SystemPerformanceRequest = ClientRequest<Contract['system']['performance']>;
/** The answer of `system.performance`: Public benchmark protocol */
export type SystemPerformanceResponse = ClientResponse<Contract['system']['performance']>;
/** The request of `system.performanceJson` (GET /.well-known/performance.json). */
export type SystemPerformanceJsonRequest = ClientRequest<Contract['system']['performanceJson']>;
/** The answer of `system.performanceJson`: Public benchmark protocol (JSON alias) */
export type SystemPerformanceJsonResponse = ClientResponse<Contract['system']['performanceJson']>;
/** The request of `system.metrics` (GET /v1/metrics). */
export type SystemMetricsRequest = ClientRequest<Contract['system']['metrics']>;
/** The answer of `system.metrics`: Prometheus metrics: request counts and latency histograms per route */
export type SystemMetricsResponse = ClientResponse<Contract['system']['metrics']>;
/** The request of `models.list` (GET /v1/models). */
export type ModelsListRequest = ClientRequest<Contract['models']['list']>;
/** The answer of `models.list`: Engines and models this server knows */
export type ModelsListResponse = ClientResponse<Contract['models']['list']>;
/** The request of `models.get` (GET /v1/models/*model). */
export type ModelsGetRequest = ClientRequest<Contract['models']['get']>;
/** The answer of `models.get`: One model by id (OpenAI's models.retrieve) */
export type ModelsGetResponse = ClientResponse<Contract['models']['get']>;
/** The request of `models.cache` (GET /v1/cache). */
export type ModelsCacheRequest = ClientRequest<Contract['models']['cache']>;
/** The answer of `models.cache`: State of the server caches */
export type ModelsCacheResponse = ClientResponse<Contract['models']['cache']>;
/** The request of `models.purgeCache` (DELETE /v1/cache). */
export type ModelsPurgeCacheRequest = ClientRequest<Contract['models']['purgeCache']>;
/** The answer of `models.purgeCache`: Purge the response cache (operator only) */
export type ModelsPurgeCacheResponse = ClientResponse<Contract['models']['purgeCache']>;
/** The request of `catalog.agentDiscovery` (GET /api/agent-discovery). */
export type CatalogAgentDiscoveryRequest = ClientRequest<Contract['catalog']['agentDiscovery']>;
/** The answer of `catalog.agentDiscovery`: How an agent uses the catalog: endpoints, value sets, the download procedure */
export type CatalogAgentDiscoveryResponse = ClientResponse<Contract['catalog']['agentDiscovery']>;
/** The request of `catalog.search` (GET /api/artifacts). */
export type CatalogSearchRequest = ClientRequest<Contract['catalog']['search']>;
/** The answer of `catalog.search`: Search artifacts: full-text ranking for q, embedding similarity with semantic=1, reasons with explain=1 */
export type CatalogSearchResponse = ClientResponse<Contract['catalog']['search']>;
/** One item of `catalog.search`'s list. */
export type CatalogSearchItem = ItemOf<Contract['catalog']['search']>;
/** `catalog.search`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface CatalogSearchMethod {
  (request?: CatalogSearchRequest, options?: CallOptions): Promise<CatalogSearchResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request?: CatalogSearchRequest, options?: ItemWalkOptions): AsyncGenerator<CatalogSearchItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request?: CatalogSearchRequest, options?: PageWalkOptions): AsyncGenerator<CatalogSearchResponse, void, undefined>;
}
/** The request of `catalog.resolve` (GET /api/resolve). */
export type CatalogResolveRequest = ClientRequest<Contract['catalog']['resolve']>;
/** The answer of `catalog.resolve`: Find the artifact of an upstream repository */
export type CatalogResolveResponse = ClientResponse<Contract['catalog']['resolve']>;
/** The request of `catalog.artifact` (GET /api/artifacts/:id). */
export type CatalogArtifactRequest = ClientRequest<Contract['catalog']['artifact']>;
/** The answer of `catalog.artifact`: One artifact */
export type CatalogArtifactResponse = ClientResponse<Contract['catalog']['artifact']>;
/** The request of `catalog.metadata` (GET /api/artifacts/:id/metadata.json). */
export type CatalogMetadataRequest = ClientRequest<Contract['catalog']['metadata']>;
/** The answer of `catalog.metadata`: Artifact, versions, files of the latest revision and review summary in one document */
export type CatalogMetadataResponse = ClientResponse<Contract['catalog']['metadata']>;
/** The request of `catalog.agentBundle` (GET /api/artifacts/:id/agent-bundle). */
export type CatalogAgentBundleRequest = ClientRequest<Contract['catalog']['agentBundle']>;
/** The answer of `catalog.agentBundle`: What an agent needs to fetch and trust an artifact: plan, trust summary, instructions */
export type CatalogAgentBundleResponse = ClientResponse<Contract['catalog']['agentBundle']>;
/** The request of `catalog.versions` (GET /api/artifacts/:id/versions). */
export type CatalogVersionsRequest = ClientRequest<Contract['catalog']['versions']>;
/** The answer of `catalog.versions`: Revisions of an artifact, newest first */
export type CatalogVersionsResponse = ClientResponse<Contract['catalog']['versions']>;
/** The request of `catalog.files` (GET /api/artifacts/:id/files). */
export type CatalogFilesRequest = ClientRequest<Contract['catalog']['files']>;
/** The answer of `catalog.files`: Files of the latest revision */
export type CatalogFilesResponse = ClientResponse<Contract['catalog']['files']>;
/** One item of `catalog.files`'s list. */
export type CatalogFilesItem = ItemOf<Contract['catalog']['files']>;
/** `catalog.files`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface CatalogFilesMethod {
  (request: CatalogFilesRequest, options?: CallOptions): Promise<CatalogFilesResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request: CatalogFilesRequest, options?: ItemWalkOptions): AsyncGenerator<CatalogFilesItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request: CatalogFilesRequest, options?: PageWalkOptions): AsyncGenerator<CatalogFilesResponse, void, undefined>;
}
/** The request of `catalog.downloadPlan` (GET /api/artifacts/:id/download-plan). */
export type CatalogDownloadPlanRequest = ClientRequest<Contract['catalog']['downloadPlan']>;
/** The answer of `catalog.downloadPlan`: Hosted files to download, with the SHA-256 and size each must have */
export type CatalogDownloadPlanResponse = ClientResponse<Contract['catalog']['downloadPlan']>;
/** The request of `catalog.download` (GET /api/downloads/:id/*path). */
export type CatalogDownloadRequest = ClientRequest<Contract['catalog']['download']>;
/** The answer of `catalog.download`: Start a download: 302 to a short-lived signed URL, with a single-use X-Svc-Completion-Token */
export type CatalogDownloadResponse = ClientResponse<Contract['catalog']['download']>;
/** The request of `catalog.completeDownload` (POST /api/download-completions/:id/*path). */
export type CatalogCompleteDownloadRequest = ClientRequest<Contract['catalog']['completeDownload']>;
/** The answer of `catalog.completeDownload`: Attest a verified download: records one pull when the token and digest match */
export type CatalogCompleteDownloadResponse = ClientResponse<Contract['catalog']['completeDownload']>;
/** The request of `catalog.trustBundles` (GET /api/trust-bundles/:id). */
export type CatalogTrustBundlesRequest = ClientRequest<Contract['catalog']['trustBundles']>;
/** The answer of `catalog.trustBundles`: Trust bundles (provenance, scans, licence) of an artifact, checked against its files */
export type CatalogTrustBundlesResponse = ClientResponse<Contract['catalog']['trustBundles']>;
/** The request of `catalog.reviews` (GET /api/artifacts/:id/reviews). */
export type CatalogReviewsRequest = ClientRequest<Contract['catalog']['reviews']>;
/** The answer of `catalog.reviews`: Reviews, newest first */
export type CatalogReviewsResponse = ClientResponse<Contract['catalog']['reviews']>;
/** The request of `catalog.reviewSummary` (GET /api/artifacts/:id/review-summary). */
export type CatalogReviewSummaryRequest = ClientRequest<Contract['catalog']['reviewSummary']>;
/** The answer of `catalog.reviewSummary`: Review count, average and distribution */
export type CatalogReviewSummaryResponse = ClientResponse<Contract['catalog']['reviewSummary']>;
/** The request of `catalog.downloadableFiles` (GET /api/downloadable-files). */
export type CatalogDownloadableFilesRequest = ClientRequest<Contract['catalog']['downloadableFiles']>;
/** The answer of `catalog.downloadableFiles`: Hosted files (latest revisions), optionally of one artifact, runtime or pack */
export type CatalogDownloadableFilesResponse = ClientResponse<Contract['catalog']['downloadableFiles']>;
/** The request of `catalog.rankings` (GET /api/rankings/:slug). */
export type CatalogRankingsRequest = ClientRequest<Contract['catalog']['rankings']>;
/** The answer of `catalog.rankings`: A ranking of artifacts */
export type CatalogRankingsResponse = ClientResponse<Contract['catalog']['rankings']>;
/** The request of `catalog.trending` (GET /api/trending). */
export type CatalogTrendingRequest = ClientRequest<Contract['catalog']['trending']>;
/** The answer of `catalog.trending`: Artifacts by attested pulls in a window (redirects and probes never count) */
export type CatalogTrendingResponse = ClientResponse<Contract['catalog']['trending']>;
/** The request of `catalog.mirrorRequest` (POST /api/artifacts/:id/mirror-request). */
export type CatalogMirrorRequestRequest = ClientRequest<Contract['catalog']['mirrorRequest']>;
/** The answer of `catalog.mirrorRequest`: Ask the operator to host (mirror) an artifact's files */
export type CatalogMirrorRequestResponse = ClientResponse<Contract['catalog']['mirrorRequest']>;
/** The request of `catalog.sourceRequest` (POST /api/source-requests). */
export type CatalogSourceRequestRequest = ClientRequest<Contract['catalog']['sourceRequest']>;
/** The answer of `catalog.sourceRequest`: Ask the operator to add an upstream repository to the catalog */
export type CatalogSourceRequestResponse = ClientResponse<Contract['catalog']['sourceRequest']>;
/** The request of `catalog.storageObject` (GET /api/storage/:bucket/*key). */
export type CatalogStorageObjectRequest = ClientRequest<Contract['catalog']['storageObject']>;
/** The answer of `catalog.storageObject`: Built-in object store: serves a hosted file to a valid V4-style signed URL */
export type CatalogStorageObjectResponse = ClientResponse<Contract['catalog']['storageObject']>;
/** The request of `blackboard.describe` (GET /api/v1/blackboard). */
export type BlackboardDescribeRequest = ClientRequest<Contract['blackboard']['describe']>;
/** The answer of `blackboard.describe`: Describe the blackboard: schema id, posting state, limits, operations */
export type BlackboardDescribeResponse = ClientResponse<Contract['blackboard']['describe']>;
/** The request of `blackboard.put` (POST /api/v1/blackboard/put). */
export type BlackboardPutRequest = ClientRequest<Contract['blackboard']['put']>;
/** The answer of `blackboard.put`: Create an item under a channel key (or a key derived from key_from); returns a one-time edit token */
export type BlackboardPutResponse = ClientResponse<Contract['blackboard']['put']>;
/** The request of `blackboard.get` (GET /api/v1/blackboard/get). */
export type BlackboardGetRequest = ClientRequest<Contract['blackboard']['get']>;
/** The answer of `blackboard.get`: Read items of one channel */
export type BlackboardGetResponse = ClientResponse<Contract['blackboard']['get']>;
/** One item of `blackboard.get`'s list. */
export type BlackboardGetItem = ItemOf<Contract['blackboard']['get']>;
/** `blackboard.get`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface BlackboardGetMethod {
  (request?: BlackboardGetRequest, options?: CallOptions): Promise<BlackboardGetResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request?: BlackboardGetRequest, options?: ItemWalkOptions): AsyncGenerator<BlackboardGetItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request?: BlackboardGetRequest, options?: PageWalkOptions): AsyncGenerator<BlackboardGetResponse, void, undefined>;
}
/** The request of `blackboard.getPost` (POST /api/v1/blackboard/get). */
export type BlackboardGetPostRequest = ClientRequest<Contract['blackboard']['getPost']>;
/** The answer of `blackboard.getPost`: Read items of one channel (JSON body) */
export type BlackboardGetPostResponse = ClientResponse<Contract['blackboard']['getPost']>;
/** One item of `blackboard.getPost`'s list. */
export type BlackboardGetPostItem = ItemOf<Contract['blackboard']['getPost']>;
/** `blackboard.getPost`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface BlackboardGetPostMethod {
  (request: BlackboardGetPostRequest, options?: CallOptions): Promise<BlackboardGetPostResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request: BlackboardGetPostRequest, options?: ItemWalkOptions): AsyncGenerator<BlackboardGetPostItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request: BlackboardGetPostRequest, options?: PageWalkOptions): AsyncGenerator<BlackboardGetPostResponse, void, undefined>;
}
/** The request of `blackboard.query` (GET /api/v1/blackboard/query). */
export type BlackboardQueryRequest = ClientRequest<Contract['blackboard']['query']>;
/** The answer of `blackboard.query`: Read items across channels with filters */
export type BlackboardQueryResponse = ClientResponse<Contract['blackboard']['query']>;
/** One item of `blackboard.query`'s list. */
export type BlackboardQueryItem = ItemOf<Contract['blackboard']['query']>;
/** `blackboard.query`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface BlackboardQueryMethod {
  (request?: BlackboardQueryRequest, options?: CallOptions): Promise<BlackboardQueryResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request?: BlackboardQueryRequest, options?: ItemWalkOptions): AsyncGenerator<BlackboardQueryItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request?: BlackboardQueryRequest, options?: PageWalkOptions): AsyncGenerator<BlackboardQueryResponse, void, undefined>;
}
/** The request of `blackboard.queryPost` (POST /api/v1/blackboard/query). */
export type BlackboardQueryPostRequest = ClientRequest<Contract['blackboard']['queryPost']>;
/** The answer of `blackboard.queryPost`: Read items across channels with filters (JSON body) */
export type BlackboardQueryPostResponse = ClientResponse<Contract['blackboard']['queryPost']>;
/** One item of `blackboard.queryPost`'s list. */
export type BlackboardQueryPostItem = ItemOf<Contract['blackboard']['queryPost']>;
/** `blackboard.queryPost`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface BlackboardQueryPostMethod {
  (request: BlackboardQueryPostRequest, options?: CallOptions): Promise<BlackboardQueryPostResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request: BlackboardQueryPostRequest, options?: ItemWalkOptions): AsyncGenerator<BlackboardQueryPostItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request: BlackboardQueryPostRequest, options?: PageWalkOptions): AsyncGenerator<BlackboardQueryPostResponse, void, undefined>;
}
/** The request of `blackboard.channels` (GET /api/v1/blackboard/channels). */
export type BlackboardChannelsRequest = ClientRequest<Contract['blackboard']['channels']>;
/** The answer of `blackboard.channels`: List active channels with activity and participant counts */
export type BlackboardChannelsResponse = ClientResponse<Contract['blackboard']['channels']>;
/** One item of `blackboard.channels`'s list. */
export type BlackboardChannelsItem = ItemOf<Contract['blackboard']['channels']>;
/** `blackboard.channels`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface BlackboardChannelsMethod {
  (request?: BlackboardChannelsRequest, options?: CallOptions): Promise<BlackboardChannelsResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request?: BlackboardChannelsRequest, options?: ItemWalkOptions): AsyncGenerator<BlackboardChannelsItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request?: BlackboardChannelsRequest, options?: PageWalkOptions): AsyncGenerator<BlackboardChannelsResponse, void, undefined>;
}
/** The request of `blackboard.channelsPost` (POST /api/v1/blackboard/channels). */
export type BlackboardChannelsPostRequest = ClientRequest<Contract['blackboard']['channelsPost']>;
/** The answer of `blackboard.channelsPost`: List active channels (JSON body) */
export type BlackboardChannelsPostResponse = ClientResponse<Contract['blackboard']['channelsPost']>;
/** One item of `blackboard.channelsPost`'s list. */
export type BlackboardChannelsPostItem = ItemOf<Contract['blackboard']['channelsPost']>;
/** `blackboard.channelsPost`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface BlackboardChannelsPostMethod {
  (request: BlackboardChannelsPostRequest, options?: CallOptions): Promise<BlackboardChannelsPostResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request: BlackboardChannelsPostRequest, options?: ItemWalkOptions): AsyncGenerator<BlackboardChannelsPostItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request: BlackboardChannelsPostRequest, options?: PageWalkOptions): AsyncGenerator<BlackboardChannelsPostResponse, void, undefined>;
}
/** The request of `blackboard.stream` (GET /api/v1/blackboard/watch). */
export type BlackboardStreamRequest = ClientRequest<Contract['blackboard']['stream']>;
/** The answer of `blackboard.stream`: Stream a channel's new posts as server-sent events, resumable with Last-Event-ID */
export type BlackboardStreamResponse = ClientResponse<Contract['blackboard']['stream']>;
/** The request of `blackboard.tombstone` (POST /api/v1/blackboard/tombstone). */
export type BlackboardTombstoneRequest = ClientRequest<Contract['blackboard']['tombstone']>;
/** The answer of `blackboard.tombstone`: Retract an item with its original edit token */
export type BlackboardTombstoneResponse = ClientResponse<Contract['blackboard']['tombstone']>;
/** The request of `blackboard.show` (GET /api/v1/blackboard/:id). */
export type BlackboardShowRequest = ClientRequest<Contract['blackboard']['show']>;
/** The answer of `blackboard.show`: Read one live item */
export type BlackboardShowResponse = ClientResponse<Contract['blackboard']['show']>;
/** The request of `blackboard.posting` (GET /api/v1/blackboard/admin/posting). */
export type BlackboardPostingRequest = ClientRequest<Contract['blackboard']['posting']>;
/** The answer of `blackboard.posting`: Read the posting switch */
export type BlackboardPostingResponse = ClientResponse<Contract['blackboard']['posting']>;
/** The request of `blackboard.setPosting` (POST /api/v1/blackboard/admin/posting). */
export type BlackboardSetPostingRequest = ClientRequest<Contract['blackboard']['setPosting']>;
/** The answer of `blackboard.setPosting`: Pause or resume new puts (operator); reads and tombstones go on */
export type BlackboardSetPostingResponse = ClientResponse<Contract['blackboard']['setPosting']>;
/** The request of `blackboard.mcp` (POST /api/mcp). */
export type BlackboardMcpRequest = ClientRequest<Contract['blackboard']['mcp']>;
/** The answer of `blackboard.mcp`: MCP endpoint (Streamable HTTP, stateless) with one tool, `blackboard`, whose op is put, get, query, channels or tombstone */
export type BlackboardMcpResponse = ClientResponse<Contract['blackboard']['mcp']>;
/** The request of `oauth.register` (POST /oauth/register). */
export type OauthRegisterRequest = ClientRequest<Contract['oauth']['register']>;
/** The answer of `oauth.register`: Register an OAuth client (RFC 7591): stateless, the client id is a signed registration */
export type OauthRegisterResponse = ClientResponse<Contract['oauth']['register']>;
/** The request of `oauth.authorize` (GET /oauth/authorize). */
export type OauthAuthorizeRequest = ClientRequest<Contract['oauth']['authorize']>;
/** The answer of `oauth.authorize`: Authorization endpoint (code + PKCE S256); approves at once and redirects with a signed short-lived code */
export type OauthAuthorizeResponse = ClientResponse<Contract['oauth']['authorize']>;
/** The request of `oauth.token` (POST /oauth/token). */
export type OauthTokenRequest = ClientRequest<Contract['oauth']['token']>;
/** The answer of `oauth.token`: Token endpoint: authorization_code, client_credentials, refresh_token; vends the demo tier */
export type OauthTokenResponse = ClientResponse<Contract['oauth']['token']>;
/** The request of `oauth.revoke` (POST /oauth/revoke). */
export type OauthRevokeRequest = ClientRequest<Contract['oauth']['revoke']>;
/** The answer of `oauth.revoke`: Token revocation (RFC 7009): an access token, or a refresh token with every token of its authorization */
export type OauthRevokeResponse = ClientResponse<Contract['oauth']['revoke']>;
/** The request of `oauth.authorizationServer` (GET /.well-known/oauth-authorization-server). */
export type OauthAuthorizationServerRequest = ClientRequest<Contract['oauth']['authorizationServer']>;
/** The answer of `oauth.authorizationServer`: Authorization-server metadata (RFC 8414) */
export type OauthAuthorizationServerResponse = ClientResponse<Contract['oauth']['authorizationServer']>;
/** The request of `oauth.authorizationServerMcp` (GET /.well-known/oauth-authorization-server/mcp). */
export type OauthAuthorizationServerMcpRequest = ClientRequest<Contract['oauth']['authorizationServerMcp']>;
/** The answer of `oauth.authorizationServerMcp`: Authorization-server metadata (RFC 8414), MCP path */
export type OauthAuthorizationServerMcpResponse = ClientResponse<Contract['oauth']['authorizationServerMcp']>;
/** The request of `oauth.authorizationServerMcpPrefix` (GET /mcp/.well-known/oauth-authorization-server). */
export type OauthAuthorizationServerMcpPrefixRequest = ClientRequest<Contract['oauth']['authorizationServerMcpPrefix']>;
/** The answer of `oauth.authorizationServerMcpPrefix`: Authorization-server metadata (RFC 8414), MCP-prefixed alias */
export type OauthAuthorizationServerMcpPrefixResponse = ClientResponse<Contract['oauth']['authorizationServerMcpPrefix']>;
/** The request of `oauth.protectedResource` (GET /.well-known/oauth-protected-resource). */
export type OauthProtectedResourceRequest = ClientRequest<Contract['oauth']['protectedResource']>;
/** The answer of `oauth.protectedResource`: Protected-resource metadata (RFC 9728) */
export type OauthProtectedResourceResponse = ClientResponse<Contract['oauth']['protectedResource']>;
/** The request of `oauth.protectedResourceMcp` (GET /.well-known/oauth-protected-resource/mcp). */
export type OauthProtectedResourceMcpRequest = ClientRequest<Contract['oauth']['protectedResourceMcp']>;
/** The answer of `oauth.protectedResourceMcp`: Protected-resource metadata (RFC 9728) of the base-surface MCP endpoint: `resource` is `{base}/mcp` */
export type OauthProtectedResourceMcpResponse = ClientResponse<Contract['oauth']['protectedResourceMcp']>;
/** The request of `oauth.protectedResourceMcpPrefix` (GET /mcp/.well-known/oauth-protected-resource). */
export type OauthProtectedResourceMcpPrefixRequest = ClientRequest<Contract['oauth']['protectedResourceMcpPrefix']>;
/** The answer of `oauth.protectedResourceMcpPrefix`: Protected-resource metadata (RFC 9728) of the base-surface MCP endpoint (`{base}/mcp`), prefixed alias */
export type OauthProtectedResourceMcpPrefixResponse = ClientResponse<Contract['oauth']['protectedResourceMcpPrefix']>;
/** The request of `oauth.protectedResourceApiMcp` (GET /.well-known/oauth-protected-resource/api/mcp). */
export type OauthProtectedResourceApiMcpRequest = ClientRequest<Contract['oauth']['protectedResourceApiMcp']>;
/** The answer of `oauth.protectedResourceApiMcp`: Protected-resource metadata (RFC 9728) of the MCP endpoint, at the path-aware location an MCP client derives from {api}/api/mcp */
export type OauthProtectedResourceApiMcpResponse = ClientResponse<Contract['oauth']['protectedResourceApiMcp']>;
/** The request of `oauth.whoami` (GET /v1/whoami). */
export type OauthWhoamiRequest = ClientRequest<Contract['oauth']['whoami']>;
/** The answer of `oauth.whoami`: The principal, scopes and credential kind the server resolved for this caller */
export type OauthWhoamiResponse = ClientResponse<Contract['oauth']['whoami']>;
/** The request of `developerKeys.create` (POST /v1/developer/credentials). */
export type DeveloperKeysCreateRequest = ClientRequest<Contract['developerKeys']['create']>;
/** The answer of `developerKeys.create`: Issue a developer key; the secret is in this answer only */
export type DeveloperKeysCreateResponse = ClientResponse<Contract['developerKeys']['create']>;
/** The request of `developerKeys.list` (GET /v1/developer/credentials). */
export type DeveloperKeysListRequest = ClientRequest<Contract['developerKeys']['list']>;
/** The answer of `developerKeys.list`: Your developer keys (metadata only), newest first, by cursor; the operator may see every owner's */
export type DeveloperKeysListResponse = ClientResponse<Contract['developerKeys']['list']>;
/** One item of `developerKeys.list`'s list. */
export type DeveloperKeysListItem = ItemOf<Contract['developerKeys']['list']>;
/** `developerKeys.list`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface DeveloperKeysListMethod {
  (request?: DeveloperKeysListRequest, options?: CallOptions): Promise<DeveloperKeysListResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request?: DeveloperKeysListRequest, options?: ItemWalkOptions): AsyncGenerator<DeveloperKeysListItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request?: DeveloperKeysListRequest, options?: PageWalkOptions): AsyncGenerator<DeveloperKeysListResponse, void, undefined>;
}
/** The request of `developerKeys.rotate` (POST /v1/developer/credentials/:credential_id/rotate). */
export type DeveloperKeysRotateRequest = ClientRequest<Contract['developerKeys']['rotate']>;
/** The answer of `developerKeys.rotate`: Replace a key: the old one dies and a new one is issued in one transaction */
export type DeveloperKeysRotateResponse = ClientResponse<Contract['developerKeys']['rotate']>;
/** The request of `developerKeys.revoke` (DELETE /v1/developer/credentials/:credential_id). */
export type DeveloperKeysRevokeRequest = ClientRequest<Contract['developerKeys']['revoke']>;
/** The answer of `developerKeys.revoke`: Revoke a key at once; revoking again answers the same receipt */
export type DeveloperKeysRevokeResponse = ClientResponse<Contract['developerKeys']['revoke']>;
/** The request of `developerKeys.update` (PATCH /v1/developer/credentials/:credential_id). */
export type DeveloperKeysUpdateRequest = ClientRequest<Contract['developerKeys']['update']>;
/** The answer of `developerKeys.update`: Change a key's limits; the next request on every replica is held to them */
export type DeveloperKeysUpdateResponse = ClientResponse<Contract['developerKeys']['update']>;
/** The request of `developerKeys.usage` (GET /v1/developer/credentials/:credential_id/usage). */
export type DeveloperKeysUsageRequest = ClientRequest<Contract['developerKeys']['usage']>;
/** The answer of `developerKeys.usage`: What a key used, per UTC day and model: inference calls, upstream tokens, credits spent; newest day first, by cursor */
export type DeveloperKeysUsageResponse = ClientResponse<Contract['developerKeys']['usage']>;
/** One item of `developerKeys.usage`'s list. */
export type DeveloperKeysUsageItem = ItemOf<Contract['developerKeys']['usage']>;
/** `developerKeys.usage`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface DeveloperKeysUsageMethod {
  (request: DeveloperKeysUsageRequest, options?: CallOptions): Promise<DeveloperKeysUsageResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request: DeveloperKeysUsageRequest, options?: ItemWalkOptions): AsyncGenerator<DeveloperKeysUsageItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request: DeveloperKeysUsageRequest, options?: PageWalkOptions): AsyncGenerator<DeveloperKeysUsageResponse, void, undefined>;
}
/** The request of `developerKeys.usageReport` (GET /v1/developer/usage). */
export type DeveloperKeysUsageReportRequest = ClientRequest<Contract['developerKeys']['usageReport']>;
/** The answer of `developerKeys.usageReport`: Every developer key's use over a range of UTC days, per day, per model and per key (the operator's usage report) */
export type DeveloperKeysUsageReportResponse = ClientResponse<Contract['developerKeys']['usageReport']>;
/** The request of `developerKeys.setWebhook` (PUT /v1/developer/credentials/:credential_id/webhook). */
export type DeveloperKeysSetWebhookRequest = ClientRequest<Contract['developerKeys']['setWebhook']>;
/** The answer of `developerKeys.setWebhook`: Set the key's webhook endpoint: its background responses are announced there, signed with a new secret shown in this answer only */
export type DeveloperKeysSetWebhookResponse = ClientResponse<Contract['developerKeys']['setWebhook']>;
/** The request of `developerKeys.webhook` (GET /v1/developer/credentials/:credential_id/webhook). */
export type DeveloperKeysWebhookRequest = ClientRequest<Contract['developerKeys']['webhook']>;
/** The answer of `developerKeys.webhook`: The key's webhook endpoint, never its secret */
export type DeveloperKeysWebhookResponse = ClientResponse<Contract['developerKeys']['webhook']>;
/** The request of `developerKeys.removeWebhook` (DELETE /v1/developer/credentials/:credential_id/webhook). */
export type DeveloperKeysRemoveWebhookRequest = ClientRequest<Contract['developerKeys']['removeWebhook']>;
/** The answer of `developerKeys.removeWebhook`: Remove the key's webhook endpoint; its deliveries not yet sent fail */
export type DeveloperKeysRemoveWebhookResponse = ClientResponse<Contract['developerKeys']['removeWebhook']>;
/** The request of `developerKeys.receipts` (GET /v1/developer/credentials/:credential_id/receipts). */
export type DeveloperKeysReceiptsRequest = ClientRequest<Contract['developerKeys']['receipts']>;
/** The answer of `developerKeys.receipts`: Append-only lifecycle receipts of a key, oldest first, by cursor */
export type DeveloperKeysReceiptsResponse = ClientResponse<Contract['developerKeys']['receipts']>;
/** One item of `developerKeys.receipts`'s list. */
export type DeveloperKeysReceiptsItem = ItemOf<Contract['developerKeys']['receipts']>;
/** `developerKeys.receipts`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface DeveloperKeysReceiptsMethod {
  (request: DeveloperKeysReceiptsRequest, options?: CallOptions): Promise<DeveloperKeysReceiptsResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request: DeveloperKeysReceiptsRequest, options?: ItemWalkOptions): AsyncGenerator<DeveloperKeysReceiptsItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request: DeveloperKeysReceiptsRequest, options?: PageWalkOptions): AsyncGenerator<DeveloperKeysReceiptsResponse, void, undefined>;
}
/** The request of `pdf.extractUpload` (POST /v1/pdf/extract/upload). */
export type PdfExtractUploadRequest = ClientRequest<Contract['pdf']['extractUpload']>;
/** The answer of `pdf.extractUpload`: Extract page-aligned text from raw PDF bytes */
export type PdfExtractUploadResponse = ClientResponse<Contract['pdf']['extractUpload']>;
/** The request of `pdf.extract` (POST /v1/pdf/extract). */
export type PdfExtractRequest = ClientRequest<Contract['pdf']['extract']>;
/** The answer of `pdf.extract`: Extract page-aligned text from a PDF given as base64 or an https URL; stream pages with `stream: true` */
export type PdfExtractResponse = ClientResponse<Contract['pdf']['extract']>;
/** The request of `documents.extract` (POST /v1/document/extract). */
export type DocumentsExtractRequest = ClientRequest<Contract['documents']['extract']>;
/** The answer of `documents.extract`: Extract section-aligned text from HTML, Markdown, plain text, DOCX or PDF */
export type DocumentsExtractResponse = ClientResponse<Contract['documents']['extract']>;
/** The request of `inference.chat` (POST /v1/chat/completions). */
export type InferenceChatRequest = ClientRequest<Contract['inference']['chat']>;
/** The answer of `inference.chat`: Chat completion in the OpenAI wire format (JSON, or an SSE stream with `stream: true`) */
export type InferenceChatResponse = ClientResponse<Contract['inference']['chat']>;
/** The request of `inference.embeddings` (POST /v1/embeddings). */
export type InferenceEmbeddingsRequest = ClientRequest<Contract['inference']['embeddings']>;
/** The answer of `inference.embeddings`: Embeddings in the OpenAI wire format (float or base64) */
export type InferenceEmbeddingsResponse = ClientResponse<Contract['inference']['embeddings']>;
/** The request of `inference.rerank` (POST /v1/rerank). */
export type InferenceRerankRequest = ClientRequest<Contract['inference']['rerank']>;
/** The answer of `inference.rerank`: Rerank documents against a query (the Cohere/Jina shape) */
export type InferenceRerankResponse = ClientResponse<Contract['inference']['rerank']>;
/** The request of `inference.classify` (POST /v1/classify). */
export type InferenceClassifyRequest = ClientRequest<Contract['inference']['classify']>;
/** The answer of `inference.classify`: Classify texts for a task (sentiment, toxicity, prompt_injection, tickets, nli) or into explicit labels */
export type InferenceClassifyResponse = ClientResponse<Contract['inference']['classify']>;
/** The request of `inference.summarize` (POST /v1/summarize). */
export type InferenceSummarizeRequest = ClientRequest<Contract['inference']['summarize']>;
/** The answer of `inference.summarize`: Summarise a text (JSON, or an SSE stream with `stream: true`) */
export type InferenceSummarizeResponse = ClientResponse<Contract['inference']['summarize']>;
/** The request of `inference.rag` (POST /v1/rag). */
export type InferenceRagRequest = ClientRequest<Contract['inference']['rag']>;
/** The answer of `inference.rag`: Answer a question from documents, citing the passages (JSON, or an SSE stream with `stream: true`) */
export type InferenceRagResponse = ClientResponse<Contract['inference']['rag']>;
/** The request of `inference.route` (POST /v1/route). */
export type InferenceRouteRequest = ClientRequest<Contract['inference']['route']>;
/** The answer of `inference.route`: Which operation and model to use for a task or a request, and why */
export type InferenceRouteResponse = ClientResponse<Contract['inference']['route']>;
/** The request of `inference.discover` (POST /v1/discover). */
export type InferenceDiscoverRequest = ClientRequest<Contract['inference']['discover']>;
/** The answer of `inference.discover`: What this service can do for a described need: operations, models and catalog artifacts, ranked */
export type InferenceDiscoverResponse = ClientResponse<Contract['inference']['discover']>;
/** The request of `inference.eval` (POST /v1/eval). */
export type InferenceEvalRequest = ClientRequest<Contract['inference']['eval']>;
/** The answer of `inference.eval`: Score predictions against references (exact match, token F1, ROUGE-L, BLEU, accuracy), optionally running a model first */
export type InferenceEvalResponse = ClientResponse<Contract['inference']['eval']>;
/** The request of `inference.findSpecialist` (POST /v1/find_specialist). */
export type InferenceFindSpecialistRequest = ClientRequest<Contract['inference']['findSpecialist']>;
/** The answer of `inference.findSpecialist`: The best catalog artifacts and served models for a task, ranked with reasons */
export type InferenceFindSpecialistResponse = ClientResponse<Contract['inference']['findSpecialist']>;
/** The request of `inference.requestSpecialist` (POST /v1/request_specialist). */
export type InferenceRequestSpecialistRequest = ClientRequest<Contract['inference']['requestSpecialist']>;
/** The answer of `inference.requestSpecialist`: Find the best current matches for a need; when none is good enough, file a feature request for it */
export type InferenceRequestSpecialistResponse = ClientResponse<Contract['inference']['requestSpecialist']>;
/** The request of `inference.speedTest` (POST /v1/speed-test). */
export type InferenceSpeedTestRequest = ClientRequest<Contract['inference']['speedTest']>;
/** The answer of `inference.speedTest`: Time a fixed built-in workload on each available engine (no body; rate limited per caller) */
export type InferenceSpeedTestResponse = ClientResponse<Contract['inference']['speedTest']>;
/** The request of `upstreams.health` (GET /v1/upstreams/health). */
export type UpstreamsHealthRequest = ClientRequest<Contract['upstreams']['health']>;
/** The answer of `upstreams.health`: Health of every upstream model deployment, as this process sees it */
export type UpstreamsHealthResponse = ClientResponse<Contract['upstreams']['health']>;
/** The request of `billing.checkout` (POST /v1/billing/processor/checkout-session). */
export type BillingCheckoutRequest = ClientRequest<Contract['billing']['checkout']>;
/** The answer of `billing.checkout`: Start buying a credit pack: a one-time Stripe Checkout Session */
export type BillingCheckoutResponse = ClientResponse<Contract['billing']['checkout']>;
/** The request of `billing.balance` (GET /v1/billing/balance). */
export type BillingBalanceRequest = ClientRequest<Contract['billing']['balance']>;
/** The answer of `billing.balance`: Spendable and reserved credits, and the packs on offer */
export type BillingBalanceResponse = ClientResponse<Contract['billing']['balance']>;
/** The request of `billing.usage` (GET /v1/billing/usage). */
export type BillingUsageRequest = ClientRequest<Contract['billing']['usage']>;
/** The answer of `billing.usage`: Credit usage receipts, newest first: a JSON page or CSV */
export type BillingUsageResponse = ClientResponse<Contract['billing']['usage']>;
/** One item of `billing.usage`'s list. */
export type BillingUsageItem = ItemOf<Contract['billing']['usage']>;
/** `billing.usage`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface BillingUsageMethod {
  (request?: BillingUsageRequest, options?: CallOptions): Promise<BillingUsageResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request?: BillingUsageRequest, options?: ItemWalkOptions): AsyncGenerator<BillingUsageItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request?: BillingUsageRequest, options?: PageWalkOptions): AsyncGenerator<BillingUsageResponse, void, undefined>;
}
/** The request of `billing.webhook` (POST /webhooks/processor). */
export type BillingWebhookRequest = ClientRequest<Contract['billing']['webhook']>;
/** The answer of `billing.webhook`: Stripe webhooks: credits granted on paid checkouts, taken back on refunds */
export type BillingWebhookResponse = ClientResponse<Contract['billing']['webhook']>;
/** The request of `credits.chat` (POST /v1/credits/chat/completions). */
export type CreditsChatRequest = ClientRequest<Contract['credits']['chat']>;
/** The answer of `credits.chat`: A chat completion paid with one prepaid credit (OpenAI wire format) */
export type CreditsChatResponse = ClientResponse<Contract['credits']['chat']>;
/** The request of `receipts.jwks` (GET /.well-known/jwks.json). */
export type ReceiptsJwksRequest = ClientRequest<Contract['receipts']['jwks']>;
/** The answer of `receipts.jwks`: Public keys (JWKS) that verify svc receipts, old keys included */
export type ReceiptsJwksResponse = ClientResponse<Contract['receipts']['jwks']>;
/** The request of `requests.feature` (POST /v1/feature-requests). */
export type RequestsFeatureRequest = ClientRequest<Contract['requests']['feature']>;
/** The answer of `requests.feature`: Ask for a capability the catalog lacks */
export type RequestsFeatureResponse = ClientResponse<Contract['requests']['feature']>;
/** The request of `requests.mirror` (POST /v1/mirror-requests). */
export type RequestsMirrorRequest = ClientRequest<Contract['requests']['mirror']>;
/** The answer of `requests.mirror`: Ask the operator to host an artifact's or repository's files */
export type RequestsMirrorResponse = ClientResponse<Contract['requests']['mirror']>;
/** The request of `requests.source` (POST /v1/source-requests). */
export type RequestsSourceRequest = ClientRequest<Contract['requests']['source']>;
/** The answer of `requests.source`: Ask the operator to add an upstream repository to the catalog */
export type RequestsSourceResponse = ClientResponse<Contract['requests']['source']>;
/** The request of `requests.status` (GET /v1/request-status). */
export type RequestsStatusRequest = ClientRequest<Contract['requests']['status']>;
/** The answer of `requests.status`: Your catalog requests, newest first, by cursor (the operator may see everyone's) */
export type RequestsStatusResponse = ClientResponse<Contract['requests']['status']>;
/** One item of `requests.status`'s list. */
export type RequestsStatusItem = ItemOf<Contract['requests']['status']>;
/** `requests.status`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface RequestsStatusMethod {
  (request?: RequestsStatusRequest, options?: CallOptions): Promise<RequestsStatusResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request?: RequestsStatusRequest, options?: ItemWalkOptions): AsyncGenerator<RequestsStatusItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request?: RequestsStatusRequest, options?: PageWalkOptions): AsyncGenerator<RequestsStatusResponse, void, undefined>;
}
/** The request of `requests.receipt` (GET /v1/request-status/:request_id). */
export type RequestsReceiptRequest = ClientRequest<Contract['requests']['receipt']>;
/** The answer of `requests.receipt`: The receipt of one of your requests, with its history (another principal's request is 404) */
export type RequestsReceiptResponse = ClientResponse<Contract['requests']['receipt']>;
/** The request of `requests.moderate` (PATCH /v1/request-status/:request_id). */
export type RequestsModerateRequest = ClientRequest<Contract['requests']['moderate']>;
/** The answer of `requests.moderate`: Moderate a request: set its status and a note (operator bearer only, never a developer key) */
export type RequestsModerateResponse = ClientResponse<Contract['requests']['moderate']>;
/** The request of `requests.radar` (GET /v1/open-source-radar). */
export type RequestsRadarRequest = ClientRequest<Contract['requests']['radar']>;
/** The answer of `requests.radar`: The most requested sources and mirrors, by distinct requesters */
export type RequestsRadarResponse = ClientResponse<Contract['requests']['radar']>;
/** The request of `discovery.try` (GET /v1/try). */
export type DiscoveryTryRequest = ClientRequest<Contract['discovery']['try']>;
/** The answer of `discovery.try`: Zero-credential activation proof: a fixed built-in operation with its result and timings, and how to go on */
export type DiscoveryTryResponse = ClientResponse<Contract['discovery']['try']>;
/** The request of `discovery.mcpServerCard` (GET /.well-known/mcp/server-card.json). */
export type DiscoveryMcpServerCardRequest = ClientRequest<Contract['discovery']['mcpServerCard']>;
/** The answer of `discovery.mcpServerCard`: MCP server card: name, version, the Streamable HTTP endpoint, protocol revisions, tools with input schemas, OAuth metadata */
export type DiscoveryMcpServerCardResponse = ClientResponse<Contract['discovery']['mcpServerCard']>;
/** The request of `discovery.mcpJson` (GET /.well-known/mcp.json). */
export type DiscoveryMcpJsonRequest = ClientRequest<Contract['discovery']['mcpJson']>;
/** The answer of `discovery.mcpJson`: MCP server card (alias) */
export type DiscoveryMcpJsonResponse = ClientResponse<Contract['discovery']['mcpJson']>;
/** The request of `discovery.mcpWellKnown` (GET /.well-known/mcp). */
export type DiscoveryMcpWellKnownRequest = ClientRequest<Contract['discovery']['mcpWellKnown']>;
/** The answer of `discovery.mcpWellKnown`: MCP server card (alias) */
export type DiscoveryMcpWellKnownResponse = ClientResponse<Contract['discovery']['mcpWellKnown']>;
/** The request of `discovery.mcpRootJson` (GET /mcp.json). */
export type DiscoveryMcpRootJsonRequest = ClientRequest<Contract['discovery']['mcpRootJson']>;
/** The answer of `discovery.mcpRootJson`: MCP server card (alias) */
export type DiscoveryMcpRootJsonResponse = ClientResponse<Contract['discovery']['mcpRootJson']>;
/** The request of `discovery.mcpPrefixedJson` (GET /mcp/.well-known/mcp.json). */
export type DiscoveryMcpPrefixedJsonRequest = ClientRequest<Contract['discovery']['mcpPrefixedJson']>;
/** The answer of `discovery.mcpPrefixedJson`: MCP server card (alias) */
export type DiscoveryMcpPrefixedJsonResponse = ClientResponse<Contract['discovery']['mcpPrefixedJson']>;
/** The request of `discovery.mcpPrefixed` (GET /mcp/.well-known/mcp). */
export type DiscoveryMcpPrefixedRequest = ClientRequest<Contract['discovery']['mcpPrefixed']>;
/** The answer of `discovery.mcpPrefixed`: MCP server card (alias) */
export type DiscoveryMcpPrefixedResponse = ClientResponse<Contract['discovery']['mcpPrefixed']>;
/** The request of `discovery.mcpEndpointServerCard` (GET /api/mcp/server-card). */
export type DiscoveryMcpEndpointServerCardRequest = ClientRequest<Contract['discovery']['mcpEndpointServerCard']>;
/** The answer of `discovery.mcpEndpointServerCard`: MCP server card of {api}/api/mcp (the blackboard tool) at the location the newer draft reserves, <mcp endpoint>/server-card */
export type DiscoveryMcpEndpointServerCardResponse = ClientResponse<Contract['discovery']['mcpEndpointServerCard']>;
/** The request of `discovery.agentCard` (GET /.well-known/agent-card.json). */
export type DiscoveryAgentCardRequest = ClientRequest<Contract['discovery']['agentCard']>;
/** The answer of `discovery.agentCard`: A2A agent card: protocol versions, the /a2a URL and transport, capabilities, modes, skills, security schemes */
export type DiscoveryAgentCardResponse = ClientResponse<Contract['discovery']['agentCard']>;
/** The request of `discovery.agentJson` (GET /.well-known/agent.json). */
export type DiscoveryAgentJsonRequest = ClientRequest<Contract['discovery']['agentJson']>;
/** The answer of `discovery.agentJson`: A2A agent card (alias) */
export type DiscoveryAgentJsonResponse = ClientResponse<Contract['discovery']['agentJson']>;
/** The request of `discovery.agentDirectoryWellKnown` (GET /.well-known/agent-directory.json). */
export type DiscoveryAgentDirectoryWellKnownRequest = ClientRequest<Contract['discovery']['agentDirectoryWellKnown']>;
/** The answer of `discovery.agentDirectoryWellKnown`: A2A agent card (alias) */
export type DiscoveryAgentDirectoryWellKnownResponse = ClientResponse<Contract['discovery']['agentDirectoryWellKnown']>;
/** The request of `discovery.agentDirectory` (GET /agent-directory.json). */
export type DiscoveryAgentDirectoryRequest = ClientRequest<Contract['discovery']['agentDirectory']>;
/** The answer of `discovery.agentDirectory`: A2A agent card (alias) */
export type DiscoveryAgentDirectoryResponse = ClientResponse<Contract['discovery']['agentDirectory']>;
/** The request of `discovery.agentsWellKnown` (GET /.well-known/agents.json). */
export type DiscoveryAgentsWellKnownRequest = ClientRequest<Contract['discovery']['agentsWellKnown']>;
/** The answer of `discovery.agentsWellKnown`: A2A agent card (alias) */
export type DiscoveryAgentsWellKnownResponse = ClientResponse<Contract['discovery']['agentsWellKnown']>;
/** The request of `discovery.agents` (GET /agents.json). */
export type DiscoveryAgentsRequest = ClientRequest<Contract['discovery']['agents']>;
/** The answer of `discovery.agents`: A2A agent card (alias) */
export type DiscoveryAgentsResponse = ClientResponse<Contract['discovery']['agents']>;
/** The request of `discovery.a2aInfo` (GET /a2a). */
export type DiscoveryA2aInfoRequest = ClientRequest<Contract['discovery']['a2aInfo']>;
/** The answer of `discovery.a2aInfo`: A2A compatibility answer for crawlers probing the RPC URL: where the agent card is and how to call */
export type DiscoveryA2aInfoResponse = ClientResponse<Contract['discovery']['a2aInfo']>;
/** The request of `discovery.a2a` (POST /a2a). */
export type DiscoveryA2aRequest = ClientRequest<Contract['discovery']['a2a']>;
/** The answer of `discovery.a2a`: A2A JSON-RPC (1.0 and 0.3): the public trial task svc-public-trial-v1 without a credential; with one holding inference:invoke, the skills of the agent card, tasks stored per caller */
export type DiscoveryA2aResponse = ClientResponse<Contract['discovery']['a2a']>;
/** The request of `x402.chat` (POST /x402/chat/completions). */
export type X402ChatRequest = ClientRequest<Contract['x402']['chat']>;
/** The answer of `x402.chat`: A chat completion paid per call with x402 (no account, no token) */
export type X402ChatResponse = ClientResponse<Contract['x402']['chat']>;
/** The request of `x402.discovery` (GET /.well-known/x402). */
export type X402DiscoveryRequest = ClientRequest<Contract['x402']['discovery']>;
/** The answer of `x402.discovery`: Pay-per-call status and payment contract */
export type X402DiscoveryResponse = ClientResponse<Contract['x402']['discovery']>;
/** The request of `x402.discoveryJson` (GET /.well-known/x402.json). */
export type X402DiscoveryJsonRequest = ClientRequest<Contract['x402']['discoveryJson']>;
/** The answer of `x402.discoveryJson`: Pay-per-call status and payment contract (JSON alias) */
export type X402DiscoveryJsonResponse = ClientResponse<Contract['x402']['discoveryJson']>;
/** The request of `jobs.submit` (POST /v1/jobs). */
export type JobsSubmitRequest = ClientRequest<Contract['jobs']['submit']>;
/** The answer of `jobs.submit`: Submit a batch job (1..8 items of one operation); answers 202 with the queued job */
export type JobsSubmitResponse = ClientResponse<Contract['jobs']['submit']>;
/** The request of `jobs.list` (GET /v1/jobs). */
export type JobsListRequest = ClientRequest<Contract['jobs']['list']>;
/** The answer of `jobs.list`: Your jobs, newest first, by cursor: status, attempts and progress (the results are at each job's /result) */
export type JobsListResponse = ClientResponse<Contract['jobs']['list']>;
/** One item of `jobs.list`'s list. */
export type JobsListItem = ItemOf<Contract['jobs']['list']>;
/** `jobs.list`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface JobsListMethod {
  (request?: JobsListRequest, options?: CallOptions): Promise<JobsListResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request?: JobsListRequest, options?: ItemWalkOptions): AsyncGenerator<JobsListItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request?: JobsListRequest, options?: PageWalkOptions): AsyncGenerator<JobsListResponse, void, undefined>;
}
/** The request of `jobs.get` (GET /v1/jobs/:job_id). */
export type JobsGetRequest = ClientRequest<Contract['jobs']['get']>;
/** The answer of `jobs.get`: A job's status, attempts, timestamps and per-item progress */
export type JobsGetResponse = ClientResponse<Contract['jobs']['get']>;
/** The request of `jobs.cancel` (POST /v1/jobs/:job_id/cancel). */
export type JobsCancelRequest = ClientRequest<Contract['jobs']['cancel']>;
/** The answer of `jobs.cancel`: Cancel a queued job (immediate and final); any other status is 409 with the current status */
export type JobsCancelResponse = ClientResponse<Contract['jobs']['cancel']>;
/** The request of `jobs.result` (GET /v1/jobs/:job_id/result). */
export type JobsResultRequest = ClientRequest<Contract['jobs']['result']>;
/** The answer of `jobs.result`: Per-item results of a finished job (an item may fail alone with its own code) */
export type JobsResultResponse = ClientResponse<Contract['jobs']['result']>;
/** The request of `responses.create` (POST /v1/responses). */
export type ResponsesCreateRequest = ClientRequest<Contract['responses']['create']>;
/** The answer of `responses.create`: Create a model response in the OpenAI Responses wire format (JSON, or an SSE stream with `stream: true`) */
export type ResponsesCreateResponse = ClientResponse<Contract['responses']['create']>;
/** The request of `responses.retrieve` (GET /v1/responses/:response_id). */
export type ResponsesRetrieveRequest = ClientRequest<Contract['responses']['retrieve']>;
/** The answer of `responses.retrieve`: A stored response, or a background response as it is now (JSON), or its events (SSE, `stream=true`) */
export type ResponsesRetrieveResponse = ClientResponse<Contract['responses']['retrieve']>;
/** The request of `responses.cancel` (POST /v1/responses/:response_id/cancel). */
export type ResponsesCancelRequest = ClientRequest<Contract['responses']['cancel']>;
/** The answer of `responses.cancel`: Cancel a background response */
export type ResponsesCancelResponse = ClientResponse<Contract['responses']['cancel']>;
/** The request of `responses.delete` (DELETE /v1/responses/:response_id). */
export type ResponsesDeleteRequest = ClientRequest<Contract['responses']['delete']>;
/** The answer of `responses.delete`: Delete a stored response (it can no longer be retrieved nor continued) */
export type ResponsesDeleteResponse = ClientResponse<Contract['responses']['delete']>;
/** The request of `responses.inputItems` (GET /v1/responses/:response_id/input_items). */
export type ResponsesInputItemsRequest = ClientRequest<Contract['responses']['inputItems']>;
/** The answer of `responses.inputItems`: The input items of a stored response, by cursor (OpenAI's `after`/`last_id`) */
export type ResponsesInputItemsResponse = ClientResponse<Contract['responses']['inputItems']>;
/** One item of `responses.inputItems`'s list. */
export type ResponsesInputItemsItem = ItemOf<Contract['responses']['inputItems']>;
/** `responses.inputItems`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface ResponsesInputItemsMethod {
  (request: ResponsesInputItemsRequest, options?: CallOptions): Promise<ResponsesInputItemsResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request: ResponsesInputItemsRequest, options?: ItemWalkOptions): AsyncGenerator<ResponsesInputItemsItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request: ResponsesInputItemsRequest, options?: PageWalkOptions): AsyncGenerator<ResponsesInputItemsResponse, void, undefined>;
}
/** The request of `responses.webhookDeliveries` (GET /v1/webhooks/deliveries). */
export type ResponsesWebhookDeliveriesRequest = ClientRequest<Contract['responses']['webhookDeliveries']>;
/** The answer of `responses.webhookDeliveries`: Webhook deliveries of background responses, newest first, by cursor (an agent: its keys' own) */
export type ResponsesWebhookDeliveriesResponse = ClientResponse<Contract['responses']['webhookDeliveries']>;
/** One item of `responses.webhookDeliveries`'s list. */
export type ResponsesWebhookDeliveriesItem = ItemOf<Contract['responses']['webhookDeliveries']>;
/** `responses.webhookDeliveries`: one page per call; `.all()` walks every item, `.pages()` every page. */
export interface ResponsesWebhookDeliveriesMethod {
  (request?: ResponsesWebhookDeliveriesRequest, options?: CallOptions): Promise<ResponsesWebhookDeliveriesResponse>;
  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */
  all(request?: ResponsesWebhookDeliveriesRequest, options?: ItemWalkOptions): AsyncGenerator<ResponsesWebhookDeliveriesItem, void, undefined>;
  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */
  pages(request?: ResponsesWebhookDeliveriesRequest, options?: PageWalkOptions): AsyncGenerator<ResponsesWebhookDeliveriesResponse, void, undefined>;
}
/** The request of `mcp.endpoint` (POST /mcp). */
export type McpEndpointRequest = ClientRequest<Contract['mcp']['endpoint']>;
/** The answer of `mcp.endpoint`: MCP endpoint (Streamable HTTP, stateless): the contract's agent-callable operations as tools, with REST's auth, validation and answers */
export type McpEndpointResponse = ClientResponse<Contract['mcp']['endpoint']>;

/** The `system` methods. */
export interface SystemMethods {
  /** Service root: liveness and self-description (`GET /`). */
  root(request?: SystemRootRequest, options?: CallOptions): Promise<SystemRootResponse>;
  /** Liveness and database reachability (`GET /healthz`). */
  healthz(request?: SystemHealthzRequest, options?: CallOptions): Promise<SystemHealthzResponse>;
  /** Readiness: 200 while taking new work; 503 at once when a shutdown begins (SIGTERM) or the database is unreachable (`GET /readyz`). */
  readyz(request?: SystemReadyzRequest, options?: CallOptions): Promise<SystemReadyzResponse>;
  /** Liveness and database reachability (alias of /healthz) (`GET /health`). */
  health(request?: SystemHealthRequest, options?: CallOptions): Promise<SystemHealthResponse>;
  /** Liveness of the api surface (`GET /api/health`). */
  apiHealth(request?: SystemApiHealthRequest, options?: CallOptions): Promise<SystemApiHealthResponse>;
  /** OpenAPI 3.1 document generated from the contract (`GET /openapi.json`). */
  openapi(request?: SystemOpenapiRequest, options?: CallOptions): Promise<SystemOpenapiResponse>;
  /** Plain-text pointer for agents (`GET /llms.txt`). */
  llmsTxt(request?: SystemLlmsTxtRequest, options?: CallOptions): Promise<SystemLlmsTxtResponse>;
  /** Plain-text pointer for agents (same body as /llms.txt) (`GET /agents.txt`). */
  agentsTxt(request?: SystemAgentsTxtRequest, options?: CallOptions): Promise<SystemAgentsTxtResponse>;
  /** Every operation with its method, path, auth and summary (`GET /llms-full.txt`). */
  llmsFullTxt(request?: SystemLlmsFullTxtRequest, options?: CallOptions): Promise<SystemLlmsFullTxtResponse>;
  /** Public benchmark protocol (`GET /.well-known/performance`). */
  performance(request?: SystemPerformanceRequest, options?: CallOptions): Promise<SystemPerformanceResponse>;
  /** Public benchmark protocol (JSON alias) (`GET /.well-known/performance.json`). */
  performanceJson(request?: SystemPerformanceJsonRequest, options?: CallOptions): Promise<SystemPerformanceJsonResponse>;
  /** Prometheus metrics: request counts and latency histograms per route (`GET /v1/metrics`). */
  metrics(request?: SystemMetricsRequest, options?: CallOptions): Promise<SystemMetricsResponse>;
}
/** The `models` methods. */
export interface ModelsMethods {
  /** Engines and models this server knows (`GET /v1/models`). */
  list(request?: ModelsListRequest, options?: CallOptions): Promise<ModelsListResponse>;
  /** One model by id (OpenAI's models.retrieve) (`GET /v1/models/*model`). */
  get(request: ModelsGetRequest, options?: CallOptions): Promise<ModelsGetResponse>;
  /** State of the server caches (`GET /v1/cache`). */
  cache(request?: ModelsCacheRequest, options?: CallOptions): Promise<ModelsCacheResponse>;
  /** Purge the response cache (operator only) (`DELETE /v1/cache`). */
  purgeCache(request?: ModelsPurgeCacheRequest, options?: CallOptions): Promise<ModelsPurgeCacheResponse>;
}
/** The `catalog` methods. */
export interface CatalogMethods {
  /** How an agent uses the catalog: endpoints, value sets, the download procedure (`GET /api/agent-discovery`). */
  agentDiscovery(request?: CatalogAgentDiscoveryRequest, options?: CallOptions): Promise<CatalogAgentDiscoveryResponse>;
  /** Search artifacts: full-text ranking for q, embedding similarity with semantic=1, reasons with explain=1 (`GET /api/artifacts`). */
  readonly search: CatalogSearchMethod;
  /** Find the artifact of an upstream repository (`GET /api/resolve`). */
  resolve(request?: CatalogResolveRequest, options?: CallOptions): Promise<CatalogResolveResponse>;
  /** One artifact (`GET /api/artifacts/:id`). */
  artifact(request: CatalogArtifactRequest, options?: CallOptions): Promise<CatalogArtifactResponse>;
  /** Artifact, versions, files of the latest revision and review summary in one document (`GET /api/artifacts/:id/metadata.json`). */
  metadata(request: CatalogMetadataRequest, options?: CallOptions): Promise<CatalogMetadataResponse>;
  /** What an agent needs to fetch and trust an artifact: plan, trust summary, instructions (`GET /api/artifacts/:id/agent-bundle`). */
  agentBundle(request: CatalogAgentBundleRequest, options?: CallOptions): Promise<CatalogAgentBundleResponse>;
  /** Revisions of an artifact, newest first (`GET /api/artifacts/:id/versions`). */
  versions(request: CatalogVersionsRequest, options?: CallOptions): Promise<CatalogVersionsResponse>;
  /** Files of the latest revision (`GET /api/artifacts/:id/files`). */
  readonly files: CatalogFilesMethod;
  /** Hosted files to download, with the SHA-256 and size each must have (`GET /api/artifacts/:id/download-plan`). */
  downloadPlan(request: CatalogDownloadPlanRequest, options?: CallOptions): Promise<CatalogDownloadPlanResponse>;
  /** Start a download: 302 to a short-lived signed URL, with a single-use X-Svc-Completion-Token (`GET /api/downloads/:id/*path`). */
  download(request: CatalogDownloadRequest, options?: CallOptions): Promise<CatalogDownloadResponse>;
  /** Attest a verified download: records one pull when the token and digest match (`POST /api/download-completions/:id/*path`). */
  completeDownload(request: CatalogCompleteDownloadRequest, options?: CallOptions): Promise<CatalogCompleteDownloadResponse>;
  /** Trust bundles (provenance, scans, licence) of an artifact, checked against its files (`GET /api/trust-bundles/:id`). */
  trustBundles(request: CatalogTrustBundlesRequest, options?: CallOptions): Promise<CatalogTrustBundlesResponse>;
  /** Reviews, newest first (`GET /api/artifacts/:id/reviews`). */
  reviews(request: CatalogReviewsRequest, options?: CallOptions): Promise<CatalogReviewsResponse>;
  /** Review count, average and distribution (`GET /api/artifacts/:id/review-summary`). */
  reviewSummary(request: CatalogReviewSummaryRequest, options?: CallOptions): Promise<CatalogReviewSummaryResponse>;
  /** Hosted files (latest revisions), optionally of one artifact, runtime or pack (`GET /api/downloadable-files`). */
  downloadableFiles(request?: CatalogDownloadableFilesRequest, options?: CallOptions): Promise<CatalogDownloadableFilesResponse>;
  /** A ranking of artifacts (`GET /api/rankings/:slug`). */
  rankings(request: CatalogRankingsRequest, options?: CallOptions): Promise<CatalogRankingsResponse>;
  /** Artifacts by attested pulls in a window (redirects and probes never count) (`GET /api/trending`). */
  trending(request?: CatalogTrendingRequest, options?: CallOptions): Promise<CatalogTrendingResponse>;
  /** Ask the operator to host (mirror) an artifact's files (`POST /api/artifacts/:id/mirror-request`). */
  mirrorRequest(request: CatalogMirrorRequestRequest, options?: CallOptions): Promise<CatalogMirrorRequestResponse>;
  /** Ask the operator to add an upstream repository to the catalog (`POST /api/source-requests`). */
  sourceRequest(request: CatalogSourceRequestRequest, options?: CallOptions): Promise<CatalogSourceRequestResponse>;
  /** Built-in object store: serves a hosted file to a valid V4-style signed URL (`GET /api/storage/:bucket/*key`). */
  storageObject(request: CatalogStorageObjectRequest, options?: CallOptions): Promise<CatalogStorageObjectResponse>;
}
/** The `blackboard` methods. */
export interface BlackboardMethods {
  /** Describe the blackboard: schema id, posting state, limits, operations (`GET /api/v1/blackboard`). */
  describe(request?: BlackboardDescribeRequest, options?: CallOptions): Promise<BlackboardDescribeResponse>;
  /** Create an item under a channel key (or a key derived from key_from); returns a one-time edit token (`POST /api/v1/blackboard/put`). */
  put(request: BlackboardPutRequest, options?: CallOptions): Promise<BlackboardPutResponse>;
  /** Read items of one channel (`GET /api/v1/blackboard/get`). */
  readonly get: BlackboardGetMethod;
  /** Read items of one channel (JSON body) (`POST /api/v1/blackboard/get`). */
  readonly getPost: BlackboardGetPostMethod;
  /** Read items across channels with filters (`GET /api/v1/blackboard/query`). */
  readonly query: BlackboardQueryMethod;
  /** Read items across channels with filters (JSON body) (`POST /api/v1/blackboard/query`). */
  readonly queryPost: BlackboardQueryPostMethod;
  /** List active channels with activity and participant counts (`GET /api/v1/blackboard/channels`). */
  readonly channels: BlackboardChannelsMethod;
  /** List active channels (JSON body) (`POST /api/v1/blackboard/channels`). */
  readonly channelsPost: BlackboardChannelsPostMethod;
  /** Stream a channel's new posts as server-sent events, resumable with Last-Event-ID (`GET /api/v1/blackboard/watch`). */
  stream(request?: BlackboardStreamRequest, options?: CallOptions): Promise<BlackboardStreamResponse>;
  /** Retract an item with its original edit token (`POST /api/v1/blackboard/tombstone`). */
  tombstone(request: BlackboardTombstoneRequest, options?: CallOptions): Promise<BlackboardTombstoneResponse>;
  /** Read one live item (`GET /api/v1/blackboard/:id`). */
  show(request: BlackboardShowRequest, options?: CallOptions): Promise<BlackboardShowResponse>;
  /** Read the posting switch (`GET /api/v1/blackboard/admin/posting`). */
  posting(request?: BlackboardPostingRequest, options?: CallOptions): Promise<BlackboardPostingResponse>;
  /** Pause or resume new puts (operator); reads and tombstones go on (`POST /api/v1/blackboard/admin/posting`). */
  setPosting(request: BlackboardSetPostingRequest, options?: CallOptions): Promise<BlackboardSetPostingResponse>;
  /** MCP endpoint (Streamable HTTP, stateless) with one tool, `blackboard`, whose op is put, get, query, channels or tombstone (`POST /api/mcp`). */
  mcp(request: BlackboardMcpRequest, options?: CallOptions): Promise<BlackboardMcpResponse>;
}
/** The `oauth` methods. */
export interface OauthMethods {
  /** Register an OAuth client (RFC 7591): stateless, the client id is a signed registration (`POST /oauth/register`). */
  register(request: OauthRegisterRequest, options?: CallOptions): Promise<OauthRegisterResponse>;
  /** Authorization endpoint (code + PKCE S256); approves at once and redirects with a signed short-lived code (`GET /oauth/authorize`). */
  authorize(request?: OauthAuthorizeRequest, options?: CallOptions): Promise<OauthAuthorizeResponse>;
  /** Token endpoint: authorization_code, client_credentials, refresh_token; vends the demo tier (`POST /oauth/token`). */
  token(request?: OauthTokenRequest, options?: CallOptions): Promise<OauthTokenResponse>;
  /** Token revocation (RFC 7009): an access token, or a refresh token with every token of its authorization (`POST /oauth/revoke`). */
  revoke(request?: OauthRevokeRequest, options?: CallOptions): Promise<OauthRevokeResponse>;
  /** Authorization-server metadata (RFC 8414) (`GET /.well-known/oauth-authorization-server`). */
  authorizationServer(request?: OauthAuthorizationServerRequest, options?: CallOptions): Promise<OauthAuthorizationServerResponse>;
  /** Authorization-server metadata (RFC 8414), MCP path (`GET /.well-known/oauth-authorization-server/mcp`). */
  authorizationServerMcp(request?: OauthAuthorizationServerMcpRequest, options?: CallOptions): Promise<OauthAuthorizationServerMcpResponse>;
  /** Authorization-server metadata (RFC 8414), MCP-prefixed alias (`GET /mcp/.well-known/oauth-authorization-server`). */
  authorizationServerMcpPrefix(request?: OauthAuthorizationServerMcpPrefixRequest, options?: CallOptions): Promise<OauthAuthorizationServerMcpPrefixResponse>;
  /** Protected-resource metadata (RFC 9728) (`GET /.well-known/oauth-protected-resource`). */
  protectedResource(request?: OauthProtectedResourceRequest, options?: CallOptions): Promise<OauthProtectedResourceResponse>;
  /** Protected-resource metadata (RFC 9728) of the base-surface MCP endpoint: `resource` is `{base}/mcp` (`GET /.well-known/oauth-protected-resource/mcp`). */
  protectedResourceMcp(request?: OauthProtectedResourceMcpRequest, options?: CallOptions): Promise<OauthProtectedResourceMcpResponse>;
  /** Protected-resource metadata (RFC 9728) of the base-surface MCP endpoint (`{base}/mcp`), prefixed alias (`GET /mcp/.well-known/oauth-protected-resource`). */
  protectedResourceMcpPrefix(request?: OauthProtectedResourceMcpPrefixRequest, options?: CallOptions): Promise<OauthProtectedResourceMcpPrefixResponse>;
  /** Protected-resource metadata (RFC 9728) of the MCP endpoint, at the path-aware location an MCP client derives from {api}/api/mcp (`GET /.well-known/oauth-protected-resource/api/mcp`). */
  protectedResourceApiMcp(request?: OauthProtectedResourceApiMcpRequest, options?: CallOptions): Promise<OauthProtectedResourceApiMcpResponse>;
  /** The principal, scopes and credential kind the server resolved for this caller (`GET /v1/whoami`). */
  whoami(request?: OauthWhoamiRequest, options?: CallOptions): Promise<OauthWhoamiResponse>;
}
/** The `developerKeys` methods. */
export interface DeveloperKeysMethods {
  /** Issue a developer key; the secret is in this answer only (`POST /v1/developer/credentials`). */
  create(request: DeveloperKeysCreateRequest, options?: CallOptions): Promise<DeveloperKeysCreateResponse>;
  /** Your developer keys (metadata only), newest first, by cursor; the operator may see every owner's (`GET /v1/developer/credentials`). */
  readonly list: DeveloperKeysListMethod;
  /** Replace a key: the old one dies and a new one is issued in one transaction (`POST /v1/developer/credentials/:credential_id/rotate`). */
  rotate(request: DeveloperKeysRotateRequest, options?: CallOptions): Promise<DeveloperKeysRotateResponse>;
  /** Revoke a key at once; revoking again answers the same receipt (`DELETE /v1/developer/credentials/:credential_id`). */
  revoke(request: DeveloperKeysRevokeRequest, options?: CallOptions): Promise<DeveloperKeysRevokeResponse>;
  /** Change a key's limits; the next request on every replica is held to them (`PATCH /v1/developer/credentials/:credential_id`). */
  update(request: DeveloperKeysUpdateRequest, options?: CallOptions): Promise<DeveloperKeysUpdateResponse>;
  /** What a key used, per UTC day and model: inference calls, upstream tokens, credits spent; newest day first, by cursor (`GET /v1/developer/credentials/:credential_id/usage`). */
  readonly usage: DeveloperKeysUsageMethod;
  /** Every developer key's use over a range of UTC days, per day, per model and per key (the operator's usage report) (`GET /v1/developer/usage`). */
  usageReport(request?: DeveloperKeysUsageReportRequest, options?: CallOptions): Promise<DeveloperKeysUsageReportResponse>;
  /** Set the key's webhook endpoint: its background responses are announced there, signed with a new secret shown in this answer only (`PUT /v1/developer/credentials/:credential_id/webhook`). */
  setWebhook(request: DeveloperKeysSetWebhookRequest, options?: CallOptions): Promise<DeveloperKeysSetWebhookResponse>;
  /** The key's webhook endpoint, never its secret (`GET /v1/developer/credentials/:credential_id/webhook`). */
  webhook(request: DeveloperKeysWebhookRequest, options?: CallOptions): Promise<DeveloperKeysWebhookResponse>;
  /** Remove the key's webhook endpoint; its deliveries not yet sent fail (`DELETE /v1/developer/credentials/:credential_id/webhook`). */
  removeWebhook(request: DeveloperKeysRemoveWebhookRequest, options?: CallOptions): Promise<DeveloperKeysRemoveWebhookResponse>;
  /** Append-only lifecycle receipts of a key, oldest first, by cursor (`GET /v1/developer/credentials/:credential_id/receipts`). */
  readonly receipts: DeveloperKeysReceiptsMethod;
}
/** The `pdf` methods. */
export interface PdfMethods {
  /** Extract page-aligned text from raw PDF bytes (`POST /v1/pdf/extract/upload`). */
  extractUpload(request: PdfExtractUploadRequest, options?: CallOptions): Promise<PdfExtractUploadResponse>;
  /** Extract page-aligned text from a PDF given as base64 or an https URL; stream pages with `stream: true` (`POST /v1/pdf/extract`). */
  extract(request: PdfExtractRequest, options?: CallOptions): Promise<PdfExtractResponse>;
}
/** The `documents` methods. */
export interface DocumentsMethods {
  /** Extract section-aligned text from HTML, Markdown, plain text, DOCX or PDF (`POST /v1/document/extract`). */
  extract(request: DocumentsExtractRequest, options?: CallOptions): Promise<DocumentsExtractResponse>;
}
/** The `inference` methods. */
export interface InferenceMethods {
  /** Chat completion in the OpenAI wire format (JSON, or an SSE stream with `stream: true`) (`POST /v1/chat/completions`). */
  chat(request: InferenceChatRequest, options?: CallOptions): Promise<InferenceChatResponse>;
  /** Embeddings in the OpenAI wire format (float or base64) (`POST /v1/embeddings`). */
  embeddings(request: InferenceEmbeddingsRequest, options?: CallOptions): Promise<InferenceEmbeddingsResponse>;
  /** Rerank documents against a query (the Cohere/Jina shape) (`POST /v1/rerank`). */
  rerank(request: InferenceRerankRequest, options?: CallOptions): Promise<InferenceRerankResponse>;
  /** Classify texts for a task (sentiment, toxicity, prompt_injection, tickets, nli) or into explicit labels (`POST /v1/classify`). */
  classify(request: InferenceClassifyRequest, options?: CallOptions): Promise<InferenceClassifyResponse>;
  /** Summarise a text (JSON, or an SSE stream with `stream: true`) (`POST /v1/summarize`). */
  summarize(request: InferenceSummarizeRequest, options?: CallOptions): Promise<InferenceSummarizeResponse>;
  /** Answer a question from documents, citing the passages (JSON, or an SSE stream with `stream: true`) (`POST /v1/rag`). */
  rag(request: InferenceRagRequest, options?: CallOptions): Promise<InferenceRagResponse>;
  /** Which operation and model to use for a task or a request, and why (`POST /v1/route`). */
  route(request: InferenceRouteRequest, options?: CallOptions): Promise<InferenceRouteResponse>;
  /** What this service can do for a described need: operations, models and catalog artifacts, ranked (`POST /v1/discover`). */
  discover(request: InferenceDiscoverRequest, options?: CallOptions): Promise<InferenceDiscoverResponse>;
  /** Score predictions against references (exact match, token F1, ROUGE-L, BLEU, accuracy), optionally running a model first (`POST /v1/eval`). */
  eval(request: InferenceEvalRequest, options?: CallOptions): Promise<InferenceEvalResponse>;
  /** The best catalog artifacts and served models for a task, ranked with reasons (`POST /v1/find_specialist`). */
  findSpecialist(request: InferenceFindSpecialistRequest, options?: CallOptions): Promise<InferenceFindSpecialistResponse>;
  /** Find the best current matches for a need; when none is good enough, file a feature request for it (`POST /v1/request_specialist`). */
  requestSpecialist(request: InferenceRequestSpecialistRequest, options?: CallOptions): Promise<InferenceRequestSpecialistResponse>;
  /** Time a fixed built-in workload on each available engine (no body; rate limited per caller) (`POST /v1/speed-test`). */
  speedTest(request?: InferenceSpeedTestRequest, options?: CallOptions): Promise<InferenceSpeedTestResponse>;
}
/** The `upstreams` methods. */
export interface UpstreamsMethods {
  /** Health of every upstream model deployment, as this process sees it (`GET /v1/upstreams/health`). */
  health(request?: UpstreamsHealthRequest, options?: CallOptions): Promise<UpstreamsHealthResponse>;
}
/** The `billing` methods. */
export interface BillingMethods {
  /** Start buying a credit pack: a one-time Stripe Checkout Session (`POST /v1/billing/processor/checkout-session`). */
  checkout(request: BillingCheckoutRequest, options?: CallOptions): Promise<BillingCheckoutResponse>;
  /** Spendable and reserved credits, and the packs on offer (`GET /v1/billing/balance`). */
  balance(request?: BillingBalanceRequest, options?: CallOptions): Promise<BillingBalanceResponse>;
  /** Credit usage receipts, newest first: a JSON page or CSV (`GET /v1/billing/usage`). */
  readonly usage: BillingUsageMethod;
  /** Stripe webhooks: credits granted on paid checkouts, taken back on refunds (`POST /webhooks/processor`). */
  webhook(request: BillingWebhookRequest, options?: CallOptions): Promise<BillingWebhookResponse>;
}
/** The `credits` methods. */
export interface CreditsMethods {
  /** A chat completion paid with one prepaid credit (OpenAI wire format) (`POST /v1/credits/chat/completions`). */
  chat(request: CreditsChatRequest, options?: CallOptions): Promise<CreditsChatResponse>;
}
/** The `receipts` methods. */
export interface ReceiptsMethods {
  /** Public keys (JWKS) that verify svc receipts, old keys included (`GET /.well-known/jwks.json`). */
  jwks(request?: ReceiptsJwksRequest, options?: CallOptions): Promise<ReceiptsJwksResponse>;
}
/** The `requests` methods. */
export interface RequestsMethods {
  /** Ask for a capability the catalog lacks (`POST /v1/feature-requests`). */
  feature(request: RequestsFeatureRequest, options?: CallOptions): Promise<RequestsFeatureResponse>;
  /** Ask the operator to host an artifact's or repository's files (`POST /v1/mirror-requests`). */
  mirror(request: RequestsMirrorRequest, options?: CallOptions): Promise<RequestsMirrorResponse>;
  /** Ask the operator to add an upstream repository to the catalog (`POST /v1/source-requests`). */
  source(request: RequestsSourceRequest, options?: CallOptions): Promise<RequestsSourceResponse>;
  /** Your catalog requests, newest first, by cursor (the operator may see everyone's) (`GET /v1/request-status`). */
  readonly status: RequestsStatusMethod;
  /** The receipt of one of your requests, with its history (another principal's request is 404) (`GET /v1/request-status/:request_id`). */
  receipt(request: RequestsReceiptRequest, options?: CallOptions): Promise<RequestsReceiptResponse>;
  /** Moderate a request: set its status and a note (operator bearer only, never a developer key) (`PATCH /v1/request-status/:request_id`). */
  moderate(request: RequestsModerateRequest, options?: CallOptions): Promise<RequestsModerateResponse>;
  /** The most requested sources and mirrors, by distinct requesters (`GET /v1/open-source-radar`). */
  radar(request?: RequestsRadarRequest, options?: CallOptions): Promise<RequestsRadarResponse>;
}
/** The `discovery` methods. */
export interface DiscoveryMethods {
  /** Zero-credential activation proof: a fixed built-in operation with its result and timings, and how to go on (`GET /v1/try`). */
  try(request?: DiscoveryTryRequest, options?: CallOptions): Promise<DiscoveryTryResponse>;
  /** MCP server card: name, version, the Streamable HTTP endpoint, protocol revisions, tools with input schemas, OAuth metadata (`GET /.well-known/mcp/server-card.json`). */
  mcpServerCard(request?: DiscoveryMcpServerCardRequest, options?: CallOptions): Promise<DiscoveryMcpServerCardResponse>;
  /** MCP server card (alias) (`GET /.well-known/mcp.json`). */
  mcpJson(request?: DiscoveryMcpJsonRequest, options?: CallOptions): Promise<DiscoveryMcpJsonResponse>;
  /** MCP server card (alias) (`GET /.well-known/mcp`). */
  mcpWellKnown(request?: DiscoveryMcpWellKnownRequest, options?: CallOptions): Promise<DiscoveryMcpWellKnownResponse>;
  /** MCP server card (alias) (`GET /mcp.json`). */
  mcpRootJson(request?: DiscoveryMcpRootJsonRequest, options?: CallOptions): Promise<DiscoveryMcpRootJsonResponse>;
  /** MCP server card (alias) (`GET /mcp/.well-known/mcp.json`). */
  mcpPrefixedJson(request?: DiscoveryMcpPrefixedJsonRequest, options?: CallOptions): Promise<DiscoveryMcpPrefixedJsonResponse>;
  /** MCP server card (alias) (`GET /mcp/.well-known/mcp`). */
  mcpPrefixed(request?: DiscoveryMcpPrefixedRequest, options?: CallOptions): Promise<DiscoveryMcpPrefixedResponse>;
  /** MCP server card of {api}/api/mcp (the blackboard tool) at the location the newer draft reserves, <mcp endpoint>/server-card (`GET /api/mcp/server-card`). */
  mcpEndpointServerCard(request?: DiscoveryMcpEndpointServerCardRequest, options?: CallOptions): Promise<DiscoveryMcpEndpointServerCardResponse>;
  /** A2A agent card: protocol versions, the /a2a URL and transport, capabilities, modes, skills, security schemes (`GET /.well-known/agent-card.json`). */
  agentCard(request?: DiscoveryAgentCardRequest, options?: CallOptions): Promise<DiscoveryAgentCardResponse>;
  /** A2A agent card (alias) (`GET /.well-known/agent.json`). */
  agentJson(request?: DiscoveryAgentJsonRequest, options?: CallOptions): Promise<DiscoveryAgentJsonResponse>;
  /** A2A agent card (alias) (`GET /.well-known/agent-directory.json`). */
  agentDirectoryWellKnown(request?: DiscoveryAgentDirectoryWellKnownRequest, options?: CallOptions): Promise<DiscoveryAgentDirectoryWellKnownResponse>;
  /** A2A agent card (alias) (`GET /agent-directory.json`). */
  agentDirectory(request?: DiscoveryAgentDirectoryRequest, options?: CallOptions): Promise<DiscoveryAgentDirectoryResponse>;
  /** A2A agent card (alias) (`GET /.well-known/agents.json`). */
  agentsWellKnown(request?: DiscoveryAgentsWellKnownRequest, options?: CallOptions): Promise<DiscoveryAgentsWellKnownResponse>;
  /** A2A agent card (alias) (`GET /agents.json`). */
  agents(request?: DiscoveryAgentsRequest, options?: CallOptions): Promise<DiscoveryAgentsResponse>;
  /** A2A compatibility answer for crawlers probing the RPC URL: where the agent card is and how to call (`GET /a2a`). */
  a2aInfo(request?: DiscoveryA2aInfoRequest, options?: CallOptions): Promise<DiscoveryA2aInfoResponse>;
  /** A2A JSON-RPC (1.0 and 0.3): the public trial task svc-public-trial-v1 without a credential; with one holding inference:invoke, the skills of the agent card, tasks stored per caller (`POST /a2a`). */
  a2a(request?: DiscoveryA2aRequest, options?: CallOptions): Promise<DiscoveryA2aResponse>;
}
/** The `x402` methods. */
export interface X402Methods {
  /** A chat completion paid per call with x402 (no account, no token) (`POST /x402/chat/completions`). */
  chat(request: X402ChatRequest, options?: CallOptions): Promise<X402ChatResponse>;
  /** Pay-per-call status and payment contract (`GET /.well-known/x402`). */
  discovery(request?: X402DiscoveryRequest, options?: CallOptions): Promise<X402DiscoveryResponse>;
  /** Pay-per-call status and payment contract (JSON alias) (`GET /.well-known/x402.json`). */
  discoveryJson(request?: X402DiscoveryJsonRequest, options?: CallOptions): Promise<X402DiscoveryJsonResponse>;
}
/** The `jobs` methods. */
export interface JobsMethods {
  /** Submit a batch job (1..8 items of one operation); answers 202 with the queued job (`POST /v1/jobs`). */
  submit(request: JobsSubmitRequest, options?: CallOptions): Promise<JobsSubmitResponse>;
  /** Your jobs, newest first, by cursor: status, attempts and progress (the results are at each job's /result) (`GET /v1/jobs`). */
  readonly list: JobsListMethod;
  /** A job's status, attempts, timestamps and per-item progress (`GET /v1/jobs/:job_id`). */
  get(request: JobsGetRequest, options?: CallOptions): Promise<JobsGetResponse>;
  /** Cancel a queued job (immediate and final); any other status is 409 with the current status (`POST /v1/jobs/:job_id/cancel`). */
  cancel(request: JobsCancelRequest, options?: CallOptions): Promise<JobsCancelResponse>;
  /** Per-item results of a finished job (an item may fail alone with its own code) (`GET /v1/jobs/:job_id/result`). */
  result(request: JobsResultRequest, options?: CallOptions): Promise<JobsResultResponse>;
}
/** The `responses` methods. */
export interface ResponsesMethods {
  /** Create a model response in the OpenAI Responses wire format (JSON, or an SSE stream with `stream: true`) (`POST /v1/responses`). */
  create(request: ResponsesCreateRequest, options?: CallOptions): Promise<ResponsesCreateResponse>;
  /** A stored response, or a background response as it is now (JSON), or its events (SSE, `stream=true`) (`GET /v1/responses/:response_id`). */
  retrieve(request: ResponsesRetrieveRequest, options?: CallOptions): Promise<ResponsesRetrieveResponse>;
  /** Cancel a background response (`POST /v1/responses/:response_id/cancel`). */
  cancel(request: ResponsesCancelRequest, options?: CallOptions): Promise<ResponsesCancelResponse>;
  /** Delete a stored response (it can no longer be retrieved nor continued) (`DELETE /v1/responses/:response_id`). */
  delete(request: ResponsesDeleteRequest, options?: CallOptions): Promise<ResponsesDeleteResponse>;
  /** The input items of a stored response, by cursor (OpenAI's `after`/`last_id`) (`GET /v1/responses/:response_id/input_items`). */
  readonly inputItems: ResponsesInputItemsMethod;
  /** Webhook deliveries of background responses, newest first, by cursor (an agent: its keys' own) (`GET /v1/webhooks/deliveries`). */
  readonly webhookDeliveries: ResponsesWebhookDeliveriesMethod;
}
/** The `mcp` methods. */
export interface McpMethods {
  /** MCP endpoint (Streamable HTTP, stateless): the contract's agent-callable operations as tools, with REST's auth, validation and answers (`POST /mcp`). */
  endpoint(request: McpEndpointRequest, options?: CallOptions): Promise<McpEndpointResponse>;
}

/** Each feature's methods, by its contract key. */
export interface ContractMethods {
  readonly system: SystemMethods;
  readonly models: ModelsMethods;
  readonly catalog: CatalogMethods;
  readonly blackboard: BlackboardMethods;
  readonly oauth: OauthMethods;
  readonly developerKeys: DeveloperKeysMethods;
  readonly pdf: PdfMethods;
  readonly documents: DocumentsMethods;
  readonly inference: InferenceMethods;
  readonly upstreams: UpstreamsMethods;
  readonly billing: BillingMethods;
  readonly credits: CreditsMethods;
  readonly receipts: ReceiptsMethods;
  readonly requests: RequestsMethods;
  readonly discovery: DiscoveryMethods;
  readonly x402: X402Methods;
  readonly jobs: JobsMethods;
  readonly responses: ResponsesMethods;
  readonly mcp: McpMethods;
}
