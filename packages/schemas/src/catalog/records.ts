import { z } from 'zod';
import { CompactReceipt } from '../receipts/records.ts';
import { CatalogRequestStatus } from '../requests/status.ts';
import {
  ArtifactSource,
  ArtifactType,
  CompletionStatus,
  Hosting,
  License,
  Pack,
  RankingSlug,
  ReviewStatus,
  SearchSort,
  Tool,
  TrendingWindow,
} from './values.ts';

/** Artifact ids are URL-safe slugs so they travel as one path segment. */
export const ArtifactId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,127}$/, 'an artifact id is 1..128 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit')
  .meta({ id: 'ArtifactId' });

/** A file path inside an artifact: relative, "/"-separated, no "." or ".." segments. */
export const FilePath = z
  .string()
  .min(1)
  .max(512)
  .regex(
    /^(?!\/)(?:(?!\.{1,2}(?:\/|$))[A-Za-z0-9._+@=-]+)(?:\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9._+@=-]+)*$/,
    'a relative path of segments of A-Z a-z 0-9 . _ + @ = -, with no "." or ".." segment',
  )
  .meta({ id: 'FilePath' });

export const Sha256Hex = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'a SHA-256 digest is 64 lower-case hex characters')
  .meta({ id: 'Sha256Hex' });

export const Revision = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a revision is 1..64 characters of A-Z a-z 0-9 . _ -');

const timestamp = z.string().meta({ description: 'ISO 8601 timestamp (UTC)' });

export const ArtifactSummary = z
  .object({
    id: ArtifactId,
    name: z.string(),
    type: ArtifactType,
    summary: z.string(),
    license: License,
    hosting: Hosting,
    source: ArtifactSource,
    repo: z.string().nullable().meta({ description: 'Upstream repository, e.g. `sentence-transformers/all-MiniLM-L6-v2`.' }),
    worksWith: z.array(Tool),
    tags: z.array(z.string()),
    reviewStatus: ReviewStatus,
    latestRevision: z.string().nullable(),
    downloads: z.number().int().nonnegative().meta({ description: 'All-time attested pulls (completions), never redirects.' }),
    rating: z.number().nullable().meta({ description: 'Average review rating 1..5, null without reviews.' }),
    reviewCount: z.number().int().nonnegative(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'ArtifactSummary' });
export type ArtifactSummary = z.infer<typeof ArtifactSummary>;

/** The longest README (model card) an artifact carries, in characters. */
export const MAX_ARTIFACT_README_CHARS = 65_536;

export const Artifact = ArtifactSummary.extend({
  description: z.string(),
  readme: z
    .string()
    .max(MAX_ARTIFACT_README_CHARS)
    .meta({
      description: `The artifact's README (its model card) as CommonMark text, at most ${MAX_ARTIFACT_README_CHARS} characters; empty when it has none. Text to render without raw HTML: the console renders it with HTML escaped and only http(s) and mailto links.`,
    }),
  homepage: z.string().nullable(),
  links: z.object({
    self: z.string(),
    versions: z.string(),
    files: z.string(),
    downloadPlan: z.string(),
    trustBundles: z.string(),
    reviews: z.string(),
    metadata: z.string(),
    agentBundle: z.string(),
  }),
}).meta({ id: 'Artifact' });
export type Artifact = z.infer<typeof Artifact>;

export const SearchExplanation = z
  .object({
    method: z.enum(['fulltext', 'semantic', 'sort']),
    score: z.number().nullable(),
    reason: z.string().meta({ description: 'Why this row ranked where it did, in words.' }),
    matchedFields: z.array(z.enum(['name', 'summary', 'description', 'tags', 'repo'])),
    sortKey: z.string(),
  })
  .meta({ id: 'SearchExplanation' });

export const SearchRow = ArtifactSummary.extend({
  score: z.number().nullable().meta({ description: 'Text rank (q) or cosine similarity (semantic=1); null when only sorting.' }),
  explain: SearchExplanation.optional(),
}).meta({ id: 'SearchRow' });

const facetCounts = z.record(z.string(), z.number().int().nonnegative());
export const SearchFacets = z
  .object({
    total: z.number().int().nonnegative(),
    type: facetCounts,
    license: facetCounts,
    hosting: facetCounts,
    source: facetCounts,
    reviewStatus: facetCounts,
    worksWith: facetCounts,
  })
  .meta({ id: 'SearchFacets', description: 'Counts over every row matching the query and filters (summary=1).' });

export const SearchResponse = z
  .object({
    rows: z.array(SearchRow),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null at the end.' }),
    sort: SearchSort,
    semantic: z.boolean(),
    embeddingModel: z.string().optional(),
    summary: SearchFacets.optional(),
  })
  .meta({ id: 'SearchResponse' });
export type SearchResponse = z.infer<typeof SearchResponse>;

export const ArtifactVersion = z
  .object({
    artifactId: ArtifactId,
    revision: z.string(),
    notes: z.string(),
    isLatest: z.boolean(),
    fileCount: z.number().int().nonnegative(),
    totalBytes: z.number().int().nonnegative(),
    createdAt: timestamp,
  })
  .meta({ id: 'ArtifactVersion' });
export const VersionsResponse = z.object({ artifactId: ArtifactId, rows: z.array(ArtifactVersion) }).meta({ id: 'VersionsResponse' });

/** The fields that name one file of one revision and its bytes, shared by every file listing. */
const fileOfRevision = {
  artifactId: ArtifactId,
  revision: z.string(),
  path: z.string(),
  sha256: Sha256Hex,
  sizeBytes: z.number().int().nonnegative(),
};

export const ArtifactFile = z
  .object({
    ...fileOfRevision,
    mediaType: z.string(),
    tools: z.array(Tool).meta({ description: 'Runtimes that need this file; empty means every runtime.' }),
    packs: z.array(Pack),
    hosted: z.boolean().meta({ description: "True when the bytes are in this service's object store (downloadable with verification)." }),
  })
  .meta({ id: 'ArtifactFile' });
export type ArtifactFile = z.infer<typeof ArtifactFile>;
export const FilesResponse = z
  .object({ artifactId: ArtifactId, revision: z.string().nullable(), rows: z.array(ArtifactFile), nextCursor: z.string().nullable() })
  .meta({ id: 'FilesResponse' });

/** One file of a plan: what the client must receive, byte for byte. */
export const PlannedFile = z
  .object({
    path: z.string(),
    sha256: Sha256Hex,
    sizeBytes: z.number().int().nonnegative(),
    mediaType: z.string(),
    downloadUrl: z.string().meta({ description: 'GET it without following redirects: 302 to a short-lived signed URL plus X-Svc-Completion-Token.' }),
    completionUrl: z.string().meta({ description: 'POST { sha256, sizeBytes, completionToken } here after verifying the bytes.' }),
  })
  .meta({ id: 'PlannedFile' });
export const DownloadPlan = z
  .object({ artifactId: ArtifactId, revision: z.string(), tool: Tool.nullable(), files: z.array(PlannedFile), totalBytes: z.number().int().nonnegative() })
  .meta({ id: 'DownloadPlan' });
export type DownloadPlan = z.infer<typeof DownloadPlan>;

export const DownloadableFile = z
  .object({
    ...fileOfRevision,
    tools: z.array(Tool),
    packs: z.array(Pack),
  })
  .meta({ id: 'DownloadableFile' });
export const DownloadableFilesResponse = z.object({ rows: z.array(DownloadableFile) }).meta({ id: 'DownloadableFilesResponse' });

export const CompletionRequest = z
  .object({
    sha256: z.string().regex(/^(sha256:)?[0-9a-fA-F]{64}$/, 'sha256 is 64 hex characters (optionally prefixed `sha256:`)'),
    sizeBytes: z.number().int().nonnegative(),
    completionToken: z.string().min(1).max(512),
  })
  .strict()
  .meta({ id: 'CompletionRequest' });
export const CompletionResponse = z
  .object({
    status: CompletionStatus,
    localHashAttested: z.literal(true),
    artifactId: ArtifactId,
    revision: z.string(),
    path: z.string(),
    sha256: Sha256Hex,
    sizeBytes: z.number().int().nonnegative(),
    recordedAt: timestamp,
    recordId: z.string().meta({ description: 'The pull record this completion counts as (on already-recorded: the earlier record).' }),
    receipt: CompactReceipt.meta({
      description:
        "svc's signed receipt of the pull record (kind download-completion): derived from the stored record, so a retried completion answers the same receipt. Post it on the board as `value.receipt.jws` to have the post show receipt_verified.",
    }),
  })
  .meta({ id: 'CompletionResponse' });
export type CompletionResponse = z.infer<typeof CompletionResponse>;

export const TrustBundle = z
  .object({
    id: z.string(),
    artifactId: ArtifactId,
    revision: z.string(),
    kind: z.enum(['provenance', 'scan', 'license', 'attestation']),
    issuer: z.string(),
    statement: z.record(z.string(), z.unknown()),
    subjects: z.array(z.object({ path: z.string(), sha256: Sha256Hex })),
    createdAt: timestamp,
  })
  .meta({ id: 'TrustBundle' });
export const TrustBundlesResponse = z
  .object({
    artifactId: ArtifactId,
    rows: z.array(TrustBundle),
    consistent: z.boolean().meta({ description: 'Every subject digest matches the catalog file of the same revision and path.' }),
    mismatches: z.array(z.object({ bundleId: z.string(), path: z.string(), expected: z.string().nullable(), found: z.string() })),
  })
  .meta({ id: 'TrustBundlesResponse' });

export const Review = z
  .object({
    id: z.string(),
    artifactId: ArtifactId,
    author: z.string(),
    rating: z.number().int().min(1).max(5),
    title: z.string(),
    body: z.string(),
    createdAt: timestamp,
  })
  .meta({ id: 'Review' });
export const ReviewsResponse = z.object({ artifactId: ArtifactId, rows: z.array(Review) }).meta({ id: 'ReviewsResponse' });
export const ReviewSummary = z
  .object({
    artifactId: ArtifactId,
    count: z.number().int().nonnegative(),
    averageRating: z.number().nullable(),
    distribution: z.object({ 1: z.number().int(), 2: z.number().int(), 3: z.number().int(), 4: z.number().int(), 5: z.number().int() }),
    reviewStatus: ReviewStatus,
  })
  .meta({ id: 'ReviewSummary' });

export const RankingRow = z.object({ rank: z.number().int().positive(), score: z.number(), artifact: ArtifactSummary }).meta({ id: 'RankingRow' });
export const RankingResponse = z
  .object({ slug: RankingSlug, title: z.string(), description: z.string(), rows: z.array(RankingRow) })
  .meta({ id: 'RankingResponse' });

export const TrendingRow = z
  .object({ rank: z.number().int().positive(), pulls: z.number().int().nonnegative(), artifact: ArtifactSummary })
  .meta({ id: 'TrendingRow' });
export const TrendingResponse = z
  .object({ window: TrendingWindow, rows: z.array(TrendingRow), countedFrom: timestamp.nullable() })
  .meta({ id: 'TrendingResponse' });

export const MirrorRequestBody = z
  .object({ useCase: z.string().min(1).max(2000), targetTool: z.string().min(1).max(64) })
  .strict()
  .meta({ id: 'MirrorRequestBody' });
export const SourceRequestBody = z
  .object({ repo: z.string().min(1).max(300), source: ArtifactSource, useCase: z.string().min(1).max(2000), targetTool: z.string().min(1).max(64) })
  .strict()
  .meta({ id: 'SourceRequestBody' });
/**
 * The api surface's answer to a mirror or source request. The request lands in the same store
 * as `POST /v1/mirror-requests` and `/v1/source-requests`: `id` is its catalog request id and
 * `statusUrl` its receipt on the base surface; `duplicate` says this caller already asked exactly this.
 */
export const RequestReceipt = z
  .object({
    id: z.string().regex(/^brr_[A-Za-z0-9_-]{16,64}$/),
    kind: z.enum(['mirror', 'source']),
    status: CatalogRequestStatus,
    artifactId: ArtifactId.nullable(),
    createdAt: timestamp,
    duplicate: z.boolean(),
    statusUrl: z.string(),
  })
  .meta({ id: 'RequestReceipt' });

export const ArtifactMetadata = z
  .object({
    schema: z.literal('svc.catalog.artifact.v1'),
    artifact: Artifact,
    versions: z.array(ArtifactVersion),
    files: z.array(ArtifactFile),
    reviewSummary: ReviewSummary,
  })
  .meta({ id: 'ArtifactMetadata' });

export const AgentBundle = z
  .object({
    schema: z.literal('svc.catalog.agent-bundle.v1'),
    artifact: ArtifactSummary,
    plan: DownloadPlan.nullable(),
    trust: z.object({ bundles: z.number().int().nonnegative(), consistent: z.boolean(), reviewStatus: ReviewStatus }),
    reviewSummary: ReviewSummary,
    instructions: z.array(z.string()),
    cli: z.string(),
  })
  .meta({ id: 'AgentBundle' });

export const AgentDiscovery = z
  .object({
    schema: z.literal('svc.catalog.discovery.v1'),
    apiUrl: z.string(),
    endpoints: z.array(z.object({ method: z.string(), path: z.string(), summary: z.string() })),
    values: z.record(z.string(), z.array(z.string())),
    downloadProcedure: z.array(z.string()),
    storageHosts: z.array(z.string()),
    embeddingModel: z.string(),
  })
  .meta({ id: 'AgentDiscovery' });

export type TrendingResponse = z.infer<typeof TrendingResponse>;
export type RankingResponse = z.infer<typeof RankingResponse>;
export type TrustBundlesResponse = z.infer<typeof TrustBundlesResponse>;
export type ReviewSummary = z.infer<typeof ReviewSummary>;
export type DownloadableFile = z.infer<typeof DownloadableFile>;
export type PlannedFile = z.infer<typeof PlannedFile>;
export type SearchRow = z.infer<typeof SearchRow>;
