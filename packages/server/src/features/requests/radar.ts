import { QueryTypes, type Sequelize } from 'sequelize';
import { radarExcludedStatuses, type CatalogRequestStatus, type OpenSourceRadarResponse } from '@svc/schemas';
import { iso } from './request-rows.ts';

interface RadarRow {
  kind: 'mirror' | 'source';
  subject: string;
  requesters: number;
  requests: number;
  first_at: Date | string;
  last_at: Date | string;
  latest_id: string;
  latest_status: CatalogRequestStatus;
  latest_repo: string | null;
  latest_source: string | null;
  artifact_id: string | null;
  artifact_repo: string | null;
  artifact_source: string | null;
  hosted: boolean | null;
}

/**
 * The most wanted sources and mirrors. Each request counts under its subject with its own
 * status, except a duplicate, which counts under its original's subject with the original's
 * status, so settling the original settles its duplicates too (the repo shown is the one the
 * requests of the subject itself name, never a duplicate's wording). Requesters are counted
 * distinctly in one statement, so the count is exact whatever is being filed meanwhile.
 */
export async function openSourceRadar(sequelize: Sequelize, limit: number): Promise<OpenSourceRadarResponse> {
  const rows = await sequelize.query<RadarRow>(
    `WITH counted AS (
       SELECT r.id, r.requester, r.created_at, r.details,
              COALESCE(o.kind, r.kind) AS kind,
              COALESCE(o.subject, r.subject) AS subject,
              CASE WHEN r.status = 'duplicate' THEN COALESCE(o.status, r.status) ELSE r.status END AS effective_status,
              o.id IS NULL AS names_subject
         FROM catalog_requests r
         LEFT JOIN catalog_requests o ON r.status = 'duplicate' AND o.id = r.duplicate_of
        WHERE r.kind IN ('mirror', 'source')
     ),
     ranked AS (
       SELECT kind, subject,
              count(DISTINCT requester)::int AS requesters,
              count(*)::int AS requests,
              min(created_at) AS first_at,
              max(created_at) AS last_at,
              (array_agg(id ORDER BY created_at DESC, id DESC))[1] AS latest_id,
              (array_agg(effective_status ORDER BY created_at DESC, id DESC))[1] AS latest_status,
              (array_agg(details->>'repo' ORDER BY created_at DESC, id DESC) FILTER (WHERE names_subject AND details->>'repo' IS NOT NULL))[1] AS latest_repo,
              (array_agg(details->>'source' ORDER BY created_at DESC, id DESC) FILTER (WHERE names_subject AND details->>'source' IS NOT NULL))[1] AS latest_source
         FROM counted
        WHERE subject IS NOT NULL AND effective_status NOT IN (:excluded)
        GROUP BY kind, subject
        ORDER BY requesters DESC, last_at DESC, kind, subject
        LIMIT :limit
     )
     SELECT ranked.*, a.id AS artifact_id, a.repo AS artifact_repo, a.source AS artifact_source, a.hosting = 'hosted' AS hosted
       FROM ranked
       LEFT JOIN LATERAL (
         SELECT id, repo, source, hosting FROM catalog_artifacts
          WHERE ranked.subject = 'artifact:' || id OR (repo IS NOT NULL AND ranked.subject = 'repo:' || source || ':' || lower(repo))
          LIMIT 1
       ) a ON true
      ORDER BY requesters DESC, last_at DESC, kind, subject`,
    { replacements: { excluded: [...radarExcludedStatuses], limit }, type: QueryTypes.SELECT },
  );
  return {
    data: rows.map((row, index) => ({
      rank: index + 1,
      kind: row.kind,
      artifact_id: row.artifact_id,
      repo: row.artifact_repo ?? row.latest_repo,
      source: (row.artifact_source ?? row.latest_source) as OpenSourceRadarResponse['data'][number]['source'],
      requesters: row.requesters,
      requests: row.requests,
      latest_request_id: row.latest_id,
      latest_status: row.latest_status,
      first_requested_at: iso(row.first_at),
      last_requested_at: iso(row.last_at),
      in_catalog: row.artifact_id !== null,
      hosted: row.hosted === true,
    })),
    generated_at: new Date().toISOString(),
  };
}
