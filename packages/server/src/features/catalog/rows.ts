import type { ArtifactSummary } from '@svc/schemas';

/** Columns and joins that make an artifact summary: downloads are attested pulls only. */
export const ARTIFACT_COLUMNS = `a.id, a.name, a.type, a.summary, a.description, a.license, a.hosting, a.source, a.repo, a.homepage,
  a.works_with, a.tags, a.review_status, a.latest_revision, a.created_at, a.updated_at,
  COALESCE(p.downloads, 0)::int AS downloads, r.rating, COALESCE(r.review_count, 0)::int AS review_count`;

export const ARTIFACT_JOINS = `LEFT JOIN (SELECT artifact_id, count(*) AS downloads FROM catalog_pulls GROUP BY artifact_id) p ON p.artifact_id = a.id
  LEFT JOIN (SELECT artifact_id, avg(rating)::float8 AS rating, count(*) AS review_count FROM catalog_reviews GROUP BY artifact_id) r ON r.artifact_id = a.id`;

export interface ArtifactRow {
  id: string;
  name: string;
  type: string;
  summary: string;
  description: string;
  license: string;
  hosting: string;
  source: string;
  repo: string | null;
  homepage: string | null;
  works_with: string[];
  tags: string[];
  review_status: string;
  latest_revision: string | null;
  created_at: Date;
  updated_at: Date;
  downloads: number;
  rating: number | null;
  review_count: number;
}

export const iso = (value: Date | string) => new Date(value).toISOString();

export function toArtifactSummary(row: ArtifactRow): ArtifactSummary {
  return {
    id: row.id,
    name: row.name,
    type: row.type as ArtifactSummary['type'],
    summary: row.summary,
    license: row.license as ArtifactSummary['license'],
    hosting: row.hosting as ArtifactSummary['hosting'],
    source: row.source as ArtifactSummary['source'],
    repo: row.repo,
    worksWith: row.works_with as ArtifactSummary['worksWith'],
    tags: row.tags,
    reviewStatus: row.review_status as ArtifactSummary['reviewStatus'],
    latestRevision: row.latest_revision,
    downloads: Number(row.downloads),
    rating: row.rating === null ? null : Math.round(Number(row.rating) * 100) / 100,
    reviewCount: Number(row.review_count),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export interface FileRow {
  artifact_id: string;
  revision: string;
  path: string;
  sha256: string;
  size_bytes: string | number;
  media_type: string;
  tools: string[];
  packs: string[];
  hosted: boolean;
  object_key: string | null;
  object_generation: string | null;
}
