import { sqlMigration } from './types.ts';

/**
 * The artifact catalog: artifacts (with their full-text document and stored embedding, so a
 * query never recomputes them), versions, files, trust bundles, reviews; attested pulls (the
 * only thing trending counts); single-use completion tokens (stored as SHA-256 hashes); and
 * mirror/source requests.
 */
export default sqlMigration(
  '20261121T1300-catalog',
  [
    `CREATE TABLE catalog_artifacts (
       id text PRIMARY KEY,
       name text NOT NULL,
       type text NOT NULL,
       summary text NOT NULL DEFAULT '',
       description text NOT NULL DEFAULT '',
       license text NOT NULL,
       hosting text NOT NULL,
       source text NOT NULL,
       repo text,
       homepage text,
       works_with jsonb NOT NULL DEFAULT '[]',
       tags jsonb NOT NULL DEFAULT '[]',
       review_status text NOT NULL DEFAULT 'unreviewed',
       latest_revision text,
       search_document tsvector NOT NULL,
       embedding real[] NOT NULL,
       embedding_model text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       updated_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE INDEX catalog_artifacts_search ON catalog_artifacts USING gin (search_document)`,
    `CREATE UNIQUE INDEX catalog_artifacts_repo ON catalog_artifacts (source, lower(repo)) WHERE repo IS NOT NULL`,
    `CREATE TABLE catalog_versions (
       artifact_id text NOT NULL REFERENCES catalog_artifacts (id) ON DELETE CASCADE,
       revision text NOT NULL,
       notes text NOT NULL DEFAULT '',
       created_at timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (artifact_id, revision)
     )`,
    `CREATE TABLE catalog_files (
       artifact_id text NOT NULL,
       revision text NOT NULL,
       path text NOT NULL,
       sha256 text NOT NULL,
       size_bytes bigint NOT NULL,
       media_type text NOT NULL DEFAULT 'application/octet-stream',
       tools jsonb NOT NULL DEFAULT '[]',
       packs jsonb NOT NULL DEFAULT '["default","full"]',
       hosted boolean NOT NULL DEFAULT false,
       object_key text,
       object_generation text,
       PRIMARY KEY (artifact_id, revision, path),
       FOREIGN KEY (artifact_id, revision) REFERENCES catalog_versions (artifact_id, revision) ON DELETE CASCADE
     )`,
    `CREATE TABLE catalog_trust_bundles (
       id text PRIMARY KEY,
       artifact_id text NOT NULL REFERENCES catalog_artifacts (id) ON DELETE CASCADE,
       revision text NOT NULL,
       kind text NOT NULL,
       issuer text NOT NULL,
       statement jsonb NOT NULL DEFAULT '{}',
       subjects jsonb NOT NULL DEFAULT '[]',
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE INDEX catalog_trust_bundles_artifact ON catalog_trust_bundles (artifact_id, created_at)`,
    `CREATE TABLE catalog_reviews (
       id text PRIMARY KEY,
       artifact_id text NOT NULL REFERENCES catalog_artifacts (id) ON DELETE CASCADE,
       author text NOT NULL,
       rating smallint NOT NULL CHECK (rating BETWEEN 1 AND 5),
       title text NOT NULL DEFAULT '',
       body text NOT NULL DEFAULT '',
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE INDEX catalog_reviews_artifact ON catalog_reviews (artifact_id, created_at DESC)`,
    `CREATE TABLE catalog_pulls (
       id bigserial PRIMARY KEY,
       artifact_id text NOT NULL REFERENCES catalog_artifacts (id) ON DELETE CASCADE,
       revision text NOT NULL,
       path text NOT NULL,
       sha256 text NOT NULL,
       size_bytes bigint NOT NULL,
       caller_key text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE INDEX catalog_pulls_time ON catalog_pulls (created_at, artifact_id)`,
    `CREATE INDEX catalog_pulls_artifact ON catalog_pulls (artifact_id, created_at)`,
    `CREATE INDEX catalog_pulls_caller ON catalog_pulls (caller_key, artifact_id, path, sha256, created_at)`,
    `CREATE TABLE catalog_completion_tokens (
       token_hash text PRIMARY KEY,
       artifact_id text NOT NULL,
       revision text NOT NULL,
       path text NOT NULL,
       sha256 text NOT NULL,
       size_bytes bigint NOT NULL,
       caller_key text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now(),
       expires_at timestamptz NOT NULL,
       spent_at timestamptz,
       outcome text
     )`,
    `CREATE INDEX catalog_completion_tokens_expiry ON catalog_completion_tokens (expires_at)`,
    `CREATE TABLE catalog_requests (
       id text PRIMARY KEY,
       kind text NOT NULL,
       artifact_id text,
       repo text,
       source text,
       use_case text NOT NULL,
       target_tool text NOT NULL,
       caller_key text NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE INDEX catalog_requests_dedupe ON catalog_requests (kind, caller_key, artifact_id, repo, created_at)`,
  ],
  [
    'DROP TABLE IF EXISTS catalog_requests',
    'DROP TABLE IF EXISTS catalog_completion_tokens',
    'DROP TABLE IF EXISTS catalog_pulls',
    'DROP TABLE IF EXISTS catalog_reviews',
    'DROP TABLE IF EXISTS catalog_trust_bundles',
    'DROP TABLE IF EXISTS catalog_files',
    'DROP TABLE IF EXISTS catalog_versions',
    'DROP TABLE IF EXISTS catalog_artifacts',
  ],
);
