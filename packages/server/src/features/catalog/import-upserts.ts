import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { embedText, HASHED_EMBEDDING_MODEL } from '../../inference/hashed-embeddings.ts';
import type { HostedFile } from './import-hosted-files.ts';
import type { ImportRecord } from './import-records.ts';

/** What an upsert did to its row: `unchanged` when every column already held the line's values. */
export type UpsertOutcome = 'created' | 'updated' | 'unchanged';

/**
 * Runs one `INSERT ... ON CONFLICT DO UPDATE ... WHERE <something differs> RETURNING (xmax = 0)
 * AS inserted` in the import's transaction: no row back means the WHERE held nothing new, and
 * `xmax = 0` tells a fresh row from an updated one.
 */
export type RunUpsert = (sql: string, replacements: Record<string, unknown>) => Promise<UpsertOutcome>;

export function upsertRunner(sequelize: Sequelize, transaction: Transaction): RunUpsert {
  return async (sql, replacements) => {
    const rows = await sequelize.query<{ inserted: boolean }>(sql, { replacements, type: QueryTypes.SELECT, transaction });
    return rows.length === 0 ? 'unchanged' : rows[0]!.inserted ? 'created' : 'updated';
  };
}

type RecordOf<Kind extends ImportRecord['kind']> = Extract<ImportRecord, { kind: Kind }>;

const vectorLiteral = (vector: Float32Array) => `{${Array.from(vector, (value) => value.toFixed(6)).join(',')}}`;

/** An artifact line, with its full-text search document and hashed embedding computed here. */
export function upsertArtifact(runUpsert: RunUpsert, record: RecordOf<'artifact'>): Promise<UpsertOutcome> {
  const text = [record.name, record.type, record.summary, record.description, record.tags.join(' '), record.repo ?? ''].join('\n');
  return runUpsert(
    `INSERT INTO catalog_artifacts AS c (id, name, type, summary, description, readme, license, hosting, source, repo, homepage, works_with, tags, review_status, latest_revision, search_document, embedding, embedding_model, created_at)
     VALUES (:id, :name, :type, :summary, :description, :readme, :license, :hosting, :source, :repo, :homepage, :worksWith::jsonb, :tags::jsonb, :reviewStatus, :latestRevision,
       setweight(to_tsvector('english', :name), 'A') || setweight(to_tsvector('english', :summary), 'B') || setweight(to_tsvector('english', :rest), 'C'),
       :embedding::real[], :model, COALESCE(:createdAt::timestamptz, now()))
     ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, type = EXCLUDED.type, summary = EXCLUDED.summary, description = EXCLUDED.description, readme = EXCLUDED.readme, license = EXCLUDED.license,
       hosting = EXCLUDED.hosting, source = EXCLUDED.source, repo = EXCLUDED.repo, homepage = EXCLUDED.homepage, works_with = EXCLUDED.works_with, tags = EXCLUDED.tags,
       review_status = EXCLUDED.review_status, latest_revision = COALESCE(EXCLUDED.latest_revision, c.latest_revision), search_document = EXCLUDED.search_document,
       embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model, updated_at = now()
     WHERE (c.name, c.type, c.summary, c.description, c.readme, c.license, c.hosting, c.source, c.repo, c.homepage, c.works_with, c.tags, c.review_status, c.embedding_model)
       IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.type, EXCLUDED.summary, EXCLUDED.description, EXCLUDED.readme, EXCLUDED.license, EXCLUDED.hosting, EXCLUDED.source, EXCLUDED.repo, EXCLUDED.homepage, EXCLUDED.works_with, EXCLUDED.tags, EXCLUDED.review_status, EXCLUDED.embedding_model)
       OR (EXCLUDED.latest_revision IS NOT NULL AND EXCLUDED.latest_revision IS DISTINCT FROM c.latest_revision)
     RETURNING (xmax = 0) AS inserted`,
    {
      ...record,
      worksWith: JSON.stringify(record.worksWith),
      tags: JSON.stringify(record.tags),
      latestRevision: record.latestRevision ?? null,
      rest: `${record.description} ${record.tags.join(' ')} ${record.repo ?? ''}`,
      embedding: vectorLiteral(embedText(text)),
      model: HASHED_EMBEDDING_MODEL,
      createdAt: record.createdAt ?? null,
    },
  );
}

export function upsertVersion(runUpsert: RunUpsert, record: RecordOf<'version'>): Promise<UpsertOutcome> {
  return runUpsert(
    `INSERT INTO catalog_versions AS c (artifact_id, revision, notes, created_at) VALUES (:artifactId, :revision, :notes, COALESCE(:createdAt::timestamptz, now()))
     ON CONFLICT (artifact_id, revision) DO UPDATE SET notes = EXCLUDED.notes WHERE c.notes IS DISTINCT FROM EXCLUDED.notes RETURNING (xmax = 0) AS inserted`,
    { ...record, createdAt: record.createdAt ?? null },
  );
}

/** A file line; a hosted file's digest, size and object come from what was stored, not from the line. */
export function upsertFile(runUpsert: RunUpsert, record: RecordOf<'file'>, hosted: HostedFile | undefined): Promise<UpsertOutcome> {
  return runUpsert(
    `INSERT INTO catalog_files AS c (artifact_id, revision, path, sha256, size_bytes, media_type, tools, packs, hosted, object_key, object_generation)
     VALUES (:artifactId, :revision, :path, :sha256, :sizeBytes, :mediaType, :tools::jsonb, :packs::jsonb, :hosted, :objectKey, :generation)
     ON CONFLICT (artifact_id, revision, path) DO UPDATE SET sha256 = EXCLUDED.sha256, size_bytes = EXCLUDED.size_bytes, media_type = EXCLUDED.media_type, tools = EXCLUDED.tools,
       packs = EXCLUDED.packs, hosted = EXCLUDED.hosted, object_key = EXCLUDED.object_key, object_generation = EXCLUDED.object_generation
     WHERE (c.sha256, c.size_bytes, c.media_type, c.tools, c.packs, c.hosted, c.object_key, c.object_generation)
       IS DISTINCT FROM (EXCLUDED.sha256, EXCLUDED.size_bytes, EXCLUDED.media_type, EXCLUDED.tools, EXCLUDED.packs, EXCLUDED.hosted, EXCLUDED.object_key, EXCLUDED.object_generation)
     RETURNING (xmax = 0) AS inserted`,
    {
      artifactId: record.artifactId,
      revision: record.revision,
      path: record.path,
      sha256: hosted?.sha256 ?? record.sha256,
      sizeBytes: hosted?.sizeBytes ?? record.sizeBytes,
      mediaType: record.mediaType,
      tools: JSON.stringify(record.tools),
      packs: JSON.stringify(record.packs),
      hosted: Boolean(hosted),
      objectKey: hosted?.objectKey ?? null,
      generation: hosted?.generation ?? null,
    },
  );
}

export function upsertTrustBundle(runUpsert: RunUpsert, record: RecordOf<'trust-bundle'>): Promise<UpsertOutcome> {
  return runUpsert(
    `INSERT INTO catalog_trust_bundles AS c (id, artifact_id, revision, kind, issuer, statement, subjects, created_at)
     VALUES (:id, :artifactId, :revision, :bundleKind, :issuer, :statement::jsonb, :subjects::jsonb, COALESCE(:createdAt::timestamptz, now()))
     ON CONFLICT (id) DO UPDATE SET artifact_id = EXCLUDED.artifact_id, revision = EXCLUDED.revision, kind = EXCLUDED.kind, issuer = EXCLUDED.issuer, statement = EXCLUDED.statement, subjects = EXCLUDED.subjects
     WHERE (c.artifact_id, c.revision, c.kind, c.issuer, c.statement, c.subjects) IS DISTINCT FROM (EXCLUDED.artifact_id, EXCLUDED.revision, EXCLUDED.kind, EXCLUDED.issuer, EXCLUDED.statement, EXCLUDED.subjects)
     RETURNING (xmax = 0) AS inserted`,
    { ...record, statement: JSON.stringify(record.statement), subjects: JSON.stringify(record.subjects), createdAt: record.createdAt ?? null },
  );
}

export function upsertReview(runUpsert: RunUpsert, record: RecordOf<'review'>): Promise<UpsertOutcome> {
  return runUpsert(
    `INSERT INTO catalog_reviews AS c (id, artifact_id, author, rating, title, body, created_at) VALUES (:id, :artifactId, :author, :rating, :title, :body, COALESCE(:createdAt::timestamptz, now()))
     ON CONFLICT (id) DO UPDATE SET artifact_id = EXCLUDED.artifact_id, author = EXCLUDED.author, rating = EXCLUDED.rating, title = EXCLUDED.title, body = EXCLUDED.body
     WHERE (c.artifact_id, c.author, c.rating, c.title, c.body) IS DISTINCT FROM (EXCLUDED.artifact_id, EXCLUDED.author, EXCLUDED.rating, EXCLUDED.title, EXCLUDED.body)
     RETURNING (xmax = 0) AS inserted`,
    { ...record, createdAt: record.createdAt ?? null },
  );
}

/** Artifacts without an explicit latest revision take their newest version. */
export async function settleLatestRevisions(sequelize: Sequelize, transaction: Transaction, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sequelize.query(
    `UPDATE catalog_artifacts a SET latest_revision = v.revision
     FROM (SELECT DISTINCT ON (artifact_id) artifact_id, revision FROM catalog_versions ORDER BY artifact_id, created_at DESC, revision DESC) v
     WHERE a.id = v.artifact_id AND a.id IN (:ids) AND (a.latest_revision IS NULL OR NOT EXISTS (SELECT 1 FROM catalog_versions x WHERE x.artifact_id = a.id AND x.revision = a.latest_revision))`,
    { replacements: { ids }, transaction },
  );
}
