import { sqlMigration } from './types.ts';

/**
 * Catalog requests of every kind (feature, mirror, source) in one store, fed by /v1/*-requests,
 * by the api surface's mirror and source requests and by request_specialist.
 *
 * - `fingerprint` is the SHA-256 of the normalised request; the unique (requester, kind,
 *   fingerprint) index makes an exact replay find the first row, even when twenty arrive at once.
 * - `subject` names what a mirror or source request is about (`artifact:<id>` or
 *   `repo:<source>:<lower-cased repo>`), so the radar counts distinct requesters per subject.
 * - `catalog_request_events` is the append-only history: the filing, then each moderation.
 *
 * The api surface's earlier rows (ids `req_<24 hex>`) are kept: their id becomes `brr_<24 hex>`
 * and their fingerprint `legacy:<id>`, which no new submission can match.
 */
export default sqlMigration(
  '20261122T1600-catalog-requests',
  [
    'ALTER TABLE catalog_requests RENAME TO catalog_requests_v0',
    `CREATE TABLE catalog_requests (
       id text PRIMARY KEY,
       kind text NOT NULL CHECK (kind IN ('feature', 'mirror', 'source')),
       requester text NOT NULL,
       fingerprint text NOT NULL,
       details jsonb NOT NULL,
       subject text,
       artifact_id text,
       status text NOT NULL DEFAULT 'submitted',
       note text,
       duplicate_of text REFERENCES catalog_requests (id),
       fulfilled_by text,
       screening jsonb NOT NULL,
       submitted_via text NOT NULL,
       created_at timestamptz NOT NULL,
       updated_at timestamptz NOT NULL
     )`,
    'CREATE UNIQUE INDEX catalog_requests_replay ON catalog_requests (requester, kind, fingerprint)',
    'CREATE INDEX catalog_requests_by_requester ON catalog_requests (requester, created_at DESC, id DESC)',
    'CREATE INDEX catalog_requests_by_time ON catalog_requests (created_at DESC, id DESC)',
    'CREATE INDEX catalog_requests_by_subject ON catalog_requests (subject) WHERE subject IS NOT NULL',
    'CREATE INDEX catalog_requests_by_original ON catalog_requests (duplicate_of) WHERE duplicate_of IS NOT NULL',
    `CREATE TABLE catalog_request_events (
       seq bigserial PRIMARY KEY,
       request_id text NOT NULL REFERENCES catalog_requests (id),
       at timestamptz NOT NULL,
       actor text NOT NULL,
       status text NOT NULL,
       previous_status text,
       note text,
       duplicate_of text,
       fulfilled_by text
     )`,
    'CREATE INDEX catalog_request_events_by_request ON catalog_request_events (request_id, seq)',
    `INSERT INTO catalog_requests (id, kind, requester, fingerprint, details, subject, artifact_id, screening, submitted_via, created_at, updated_at)
     SELECT 'brr_' || substr(id, 5), kind, caller_key, 'legacy:' || id,
            jsonb_strip_nulls(jsonb_build_object('artifact_id', artifact_id, 'repo', repo, 'source', source, 'use_case', use_case, 'target_tool', target_tool)),
            CASE WHEN artifact_id IS NOT NULL THEN 'artifact:' || artifact_id ELSE 'repo:' || source || ':' || lower(repo) END,
            artifact_id, '{"action":"allow","findings":[]}'::jsonb, 'catalog_api', date_trunc('milliseconds', created_at), date_trunc('milliseconds', created_at)
       FROM catalog_requests_v0`,
    `INSERT INTO catalog_request_events (request_id, at, actor, status)
     SELECT id, created_at, 'submitter', 'submitted' FROM catalog_requests ORDER BY created_at, id`,
    'DROP TABLE catalog_requests_v0',
  ],
  [
    'DROP TABLE IF EXISTS catalog_request_events',
    'DROP TABLE IF EXISTS catalog_requests',
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
    'CREATE INDEX catalog_requests_dedupe ON catalog_requests (kind, caller_key, artifact_id, repo, created_at)',
  ],
);
