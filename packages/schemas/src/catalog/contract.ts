import { z } from 'zod';
import { queryBoolean, queryInt } from '../query.ts';
import { bytes, defineContract, defineRoute, paging, redirect } from '../route.ts';
import {
  AgentBundle,
  AgentDiscovery,
  Artifact,
  ArtifactId,
  ArtifactMetadata,
  CompletionRequest,
  CompletionResponse,
  DownloadableFilesResponse,
  DownloadPlan,
  FilesResponse,
  MirrorRequestBody,
  RankingResponse,
  RequestReceipt,
  ReviewsResponse,
  ReviewSummary,
  SearchResponse,
  SourceRequestBody,
  TrendingResponse,
  TrustBundlesResponse,
  VersionsResponse,
} from './records.ts';
import {
  ArtifactSource,
  ArtifactType,
  Hosting,
  License,
  optionalQueryEnum,
  optionalQueryText,
  Pack,
  RankingSlug,
  ReviewStatus,
  SearchSort,
  Tool,
  TrendingWindow,
} from './values.ts';

/** The catalog is public; a bearer may be sent and is only used to tell callers apart. */
const catalogRoute = { auth: { kind: 'public' }, surface: 'api', tags: ['catalog'] } as const;

/** Offset cursor as the spec describes it: a string, "0" by default. */
const cursor = z
  .string()
  .regex(/^\d{1,9}$/, 'a cursor is the `nextCursor` of a previous page (a decimal offset)')
  .optional()
  .transform((value) => Number(value ?? '0'));
/** Catalog lists page by an offset string: `nextCursor` of one page is the `cursor` of the next. */
const offsetPaging = paging({ items: 'rows', cursor: 'nextCursor', cursorIn: 'query', cursorParam: 'cursor' });
const limit = (max: number, fallback: number) => queryInt(1, max).default(fallback);
const flag = () =>
  queryBoolean()
    .optional()
    .transform((value) => value === true);

const artifactParams = z.object({ id: ArtifactId });
/** The wildcard arrives joined with "/"; the server refuses traversal with `invalid_path`. */
const fileParams = z.object({
  id: ArtifactId,
  path: z.string().min(1).max(1024).meta({ description: 'File path inside the artifact; `..`, absolute and encoded traversal are refused.' }),
});

export const SearchQuery = z.object({
  q: optionalQueryText(500),
  limit: limit(100, 20),
  cursor,
  sort: optionalQueryEnum(SearchSort),
  type: optionalQueryEnum(ArtifactType),
  license: optionalQueryEnum(License),
  hosting: optionalQueryEnum(Hosting),
  source: optionalQueryEnum(ArtifactSource),
  worksWith: optionalQueryEnum(Tool),
  reviewStatus: optionalQueryEnum(ReviewStatus),
  semantic: flag(),
  explain: flag(),
  summary: flag(),
});

/** Fields of a V4 signed URL; checked by the store itself so a bad one is 403, not 422. */
const SignedUrlQuery = z.object({
  'x-goog-algorithm': z.string().optional(),
  'x-goog-credential': z.string().optional(),
  'x-goog-date': z.string().optional(),
  'x-goog-expires': z.string().optional(),
  'x-goog-signedheaders': z.string().optional(),
  'x-goog-signature': z.string().optional(),
  generation: z.string().optional(),
});

export const catalogContract = defineContract({
  agentDiscovery: defineRoute({
    ...catalogRoute,
    cors: 'any-origin',
    method: 'GET',
    path: '/api/agent-discovery',
    summary: 'How an agent uses the catalog: endpoints, value sets, the download procedure',
    responses: { 200: AgentDiscovery },
  }),
  search: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/artifacts',
    summary: 'Search artifacts: full-text ranking for q, embedding similarity with semantic=1, reasons with explain=1',
    description: 'Empty query values are treated as absent. `summary=1` adds facet counts over every match.',
    query: SearchQuery,
    errors: [400],
    responses: { 200: SearchResponse },
    paging: offsetPaging,
  }),
  resolve: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/resolve',
    summary: 'Find the artifact of an upstream repository',
    query: z.object({ repo: z.string().min(1).max(300), source: optionalQueryEnum(ArtifactSource) }),
    errors: [404],
    responses: { 200: Artifact },
  }),
  artifact: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/artifacts/:id',
    summary: 'One artifact',
    params: artifactParams,
    errors: [404],
    responses: { 200: Artifact },
  }),
  metadata: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/artifacts/:id/metadata.json',
    summary: 'Artifact, versions, files of the latest revision and review summary in one document',
    params: artifactParams,
    errors: [404],
    responses: { 200: ArtifactMetadata },
  }),
  agentBundle: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/artifacts/:id/agent-bundle',
    summary: 'What an agent needs to fetch and trust an artifact: plan, trust summary, instructions',
    params: artifactParams,
    errors: [404],
    responses: { 200: AgentBundle },
  }),
  versions: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/artifacts/:id/versions',
    summary: 'Revisions of an artifact, newest first',
    params: artifactParams,
    errors: [404],
    responses: { 200: VersionsResponse },
  }),
  files: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/artifacts/:id/files',
    summary: 'Files of the latest revision',
    params: artifactParams,
    query: z.object({ limit: limit(500, 100), cursor, tool: optionalQueryEnum(Tool) }),
    errors: [404],
    responses: { 200: FilesResponse },
    paging: offsetPaging,
  }),
  downloadPlan: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/artifacts/:id/download-plan',
    summary: 'Hosted files to download, with the SHA-256 and size each must have',
    params: artifactParams,
    query: z.object({ tool: optionalQueryEnum(Tool) }),
    errors: [404, 409],
    responses: { 200: DownloadPlan },
  }),
  download: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/downloads/:id/*path',
    summary: 'Start a download: 302 to a short-lived signed URL, with a single-use X-Svc-Completion-Token',
    description:
      'Only an initiation: nothing is counted until the completion call succeeds. Do not follow the redirect blindly; see the download procedure in /api/agent-discovery. A HEAD is a probe: it answers the same redirect and headers but issues no completion token and stores nothing.',
    params: fileParams,
    errors: [400, 404, 409],
    responses: { 302: redirect() },
  }),
  completeDownload: defineRoute({
    ...catalogRoute,
    method: 'POST',
    path: '/api/download-completions/:id/*path',
    summary: 'Attest a verified download: records one pull when the token and digest match',
    description:
      'Safe to retry: posting the same token with the same sha256 and sizeBytes again (the first answer was lost on the way) answers 200 `already-recorded` with the first record and counts nothing new. A spent token with other bytes stays refused with 409 `completion_token_spent`; a digest mismatch spends nothing, so the right bytes may still be attested.',
    params: fileParams,
    body: CompletionRequest,
    errors: [400, 403, 404, 409, 410],
    responses: { 200: CompletionResponse },
  }),
  trustBundles: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/trust-bundles/:id',
    summary: 'Trust bundles (provenance, scans, licence) of an artifact, checked against its files',
    params: artifactParams,
    errors: [404],
    responses: { 200: TrustBundlesResponse },
  }),
  reviews: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/artifacts/:id/reviews',
    summary: 'Reviews, newest first',
    params: artifactParams,
    query: z.object({ limit: limit(100, 20) }),
    errors: [404],
    responses: { 200: ReviewsResponse },
  }),
  reviewSummary: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/artifacts/:id/review-summary',
    summary: 'Review count, average and distribution',
    params: artifactParams,
    errors: [404],
    responses: { 200: ReviewSummary },
  }),
  downloadableFiles: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/downloadable-files',
    summary: 'Hosted files (latest revisions), optionally of one artifact, runtime or pack',
    query: z.object({
      artifactId: ArtifactId.optional().or(z.literal('').transform(() => undefined)),
      limit: limit(500, 100),
      tool: optionalQueryEnum(Tool),
      pack: optionalQueryEnum(Pack),
    }),
    responses: { 200: DownloadableFilesResponse },
  }),
  rankings: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/rankings/:slug',
    summary: 'A ranking of artifacts',
    params: z.object({ slug: RankingSlug }),
    query: z.object({ limit: limit(100, 25) }),
    responses: { 200: RankingResponse },
  }),
  trending: defineRoute({
    ...catalogRoute,
    method: 'GET',
    path: '/api/trending',
    summary: 'Artifacts by attested pulls in a window (redirects and probes never count)',
    query: z.object({ window: optionalQueryEnum(TrendingWindow).transform((value) => value ?? '7d'), limit: limit(100, 25) }),
    responses: { 200: TrendingResponse },
  }),
  mirrorRequest: defineRoute({
    ...catalogRoute,
    method: 'POST',
    path: '/api/artifacts/:id/mirror-request',
    summary: "Ask the operator to host (mirror) an artifact's files",
    params: artifactParams,
    body: MirrorRequestBody,
    errors: [404],
    responses: { 202: RequestReceipt },
  }),
  sourceRequest: defineRoute({
    ...catalogRoute,
    method: 'POST',
    path: '/api/source-requests',
    summary: 'Ask the operator to add an upstream repository to the catalog',
    body: SourceRequestBody,
    responses: { 202: RequestReceipt },
  }),
  storageObject: defineRoute({
    ...catalogRoute,
    tags: ['storage'],
    method: 'GET',
    path: '/api/storage/:bucket/*key',
    summary: 'Built-in object store: serves a hosted file to a valid V4-style signed URL',
    description:
      'Every fetch checks the HMAC signature, the expiry (x-goog-expires 1..300 seconds from x-goog-date) and the object generation. Used only when the server hosts files itself. A single `Range: bytes=…` is answered 206 with `Content-Range`, as GCS signed URLs are (a range starting past the end is 416 `range_not_satisfiable` with `Content-Range: bytes */<size>`; several ranges or a malformed one get the whole object, 200). Every answer carries `Accept-Ranges: bytes` and `ETag` (the generation, quoted); an `If-Range` naming another ETag gets the whole object, so a resumed download never splices two generations.',
    params: z.object({ bucket: z.string().min(1).max(63), key: z.string().min(1).max(1024) }),
    query: SignedUrlQuery,
    errors: [403, 404, 416],
    responses: { 200: bytes(), 206: bytes() },
  }),
});
