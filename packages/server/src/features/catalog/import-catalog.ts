import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { embedText, HASHED_EMBEDDING_MODEL } from '../../inference/hashed-embeddings.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import { ImportRecord } from './import-records.ts';

export interface ImportIssue {
  line: number;
  message: string;
}

/** Validation or consistency problems, each naming its line; nothing was imported. */
export class CatalogImportError extends Error {
  readonly issues: ImportIssue[];
  constructor(issues: ImportIssue[]) {
    super(`Catalog import refused, nothing imported:\n${issues.map((issue) => `  line ${issue.line}: ${issue.message}`).join('\n')}`);
    this.name = 'CatalogImportError';
    this.issues = issues;
  }
}

type Counts = { created: number; updated: number; unchanged: number };
export interface ImportResult {
  artifacts: Counts;
  versions: Counts;
  files: Counts;
  trustBundles: Counts;
  reviews: Counts;
  hostedBytes: number;
}

type Parsed = { line: number; record: z.infer<typeof ImportRecord> };
type FileRecord = Extract<z.infer<typeof ImportRecord>, { kind: 'file' }>;

/** Parses JSONL text into numbered lines; blank lines and `#` comments are skipped; bad JSON is kept as an issue. */
export function parseJsonLines(text: string): Array<{ line: number; value: unknown; invalidJson?: string }> {
  const out: Array<{ line: number; value: unknown; invalidJson?: string }> = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const trimmed = raw.trim();
    if (!trimmed || trimmed.startsWith('#')) return;
    try {
      out.push({ line: index + 1, value: JSON.parse(trimmed) });
    } catch (error) {
      out.push({ line: index + 1, value: undefined, invalidJson: (error as Error).message });
    }
  });
  return out;
}

const vectorLiteral = (vector: Float32Array) => `{${Array.from(vector, (value) => value.toFixed(6)).join(',')}}`;
const tally = (counts: Counts, outcome: 'created' | 'updated' | 'unchanged') => counts[outcome]++;

/**
 * Idempotent upsert of catalog records (artifact, version, file, trust-bundle, review lines).
 * Everything is validated first and every problem is reported with its line; then hosted bytes
 * go to the object store (skipped when the same digest is already there) and the rows are
 * written in one transaction. Running the same file twice changes nothing the second time.
 */
export async function importCatalog(options: { sequelize: Sequelize; store: ObjectStore; baseDir?: string }, lines: Array<{ line: number; value: unknown; invalidJson?: string }>): Promise<ImportResult> {
  const { sequelize, store } = options;
  const issues: ImportIssue[] = [];
  const parsed: Parsed[] = [];
  for (const { line, value, invalidJson } of lines) {
    if (invalidJson !== undefined) {
      issues.push({ line, message: `not valid JSON (${invalidJson})` });
      continue;
    }
    const result = ImportRecord.safeParse(value);
    if (result.success) parsed.push({ line, record: result.data });
    else for (const issue of result.error.issues) issues.push({ line, message: `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}` });
  }

  // References must resolve within the file or to rows already in the catalog.
  const known = await sequelize.query<{ id: string }>('SELECT id FROM catalog_artifacts', { type: QueryTypes.SELECT });
  const knownVersions = await sequelize.query<{ artifact_id: string; revision: string }>('SELECT artifact_id, revision FROM catalog_versions', { type: QueryTypes.SELECT });
  const artifacts = new Set(known.map((row) => row.id));
  const versions = new Set(knownVersions.map((row) => `${row.artifact_id}@${row.revision}`));
  for (const { record } of parsed) {
    if (record.kind === 'artifact') artifacts.add(record.id);
    if (record.kind === 'version') versions.add(`${record.artifactId}@${record.revision}`);
  }
  const seen = new Map<string, number>();
  for (const { line, record } of parsed) {
    const identity = record.kind === 'artifact' ? record.id : record.kind === 'version' ? `${record.artifactId}@${record.revision}` : record.kind === 'file' ? `${record.artifactId}@${record.revision}/${record.path}` : record.id;
    const key = `${record.kind}:${identity}`;
    if (seen.has(key)) issues.push({ line, message: `duplicate ${record.kind} ${identity} (first on line ${seen.get(key)})` });
    seen.set(key, line);
    if (record.kind !== 'artifact' && !artifacts.has(record.artifactId)) issues.push({ line, message: `unknown artifact "${record.artifactId}": add an artifact line first` });
    if ((record.kind === 'file' || record.kind === 'trust-bundle') && artifacts.has(record.artifactId) && !versions.has(`${record.artifactId}@${record.revision}`)) {
      issues.push({ line, message: `unknown version ${record.artifactId}@${record.revision}: add a version line first` });
    }
    if (record.kind === 'artifact' && record.latestRevision && !versions.has(`${record.id}@${record.latestRevision}`)) issues.push({ line, message: `latestRevision ${record.latestRevision} has no version line` });
  }
  if (issues.length) throw new CatalogImportError(issues);

  // Hosted bytes first: the store is outside the transaction, and a failed digest check stops the import.
  const hosted = new Map<number, { sha256: string; sizeBytes: number; objectKey: string; generation: string }>();
  let hostedBytes = 0;
  for (const { line, record } of parsed) {
    if (record.kind !== 'file') continue;
    const placed = await placeFile(options, record, line, issues);
    if (placed) {
      hosted.set(line, placed);
      hostedBytes += placed.sizeBytes;
    }
  }
  if (issues.length) throw new CatalogImportError(issues);

  const result: ImportResult = { artifacts: zero(), versions: zero(), files: zero(), trustBundles: zero(), reviews: zero(), hostedBytes };
  await sequelize.transaction(async (transaction) => {
    const q = (sql: string, replacements: Record<string, unknown>) => sequelize.query<{ inserted: boolean }>(sql, { replacements, type: QueryTypes.SELECT, transaction });
    const outcome = (rows: Array<{ inserted: boolean }>) => (rows.length === 0 ? 'unchanged' : rows[0]!.inserted ? 'created' : 'updated');
    const touched = new Set<string>();
    for (const { record } of parsed) {
      if (record.kind !== 'artifact') continue;
      touched.add(record.id);
      const text = [record.name, record.type, record.summary, record.description, record.tags.join(' '), record.repo ?? ''].join('\n');
      const rows = await q(
        `INSERT INTO catalog_artifacts AS c (id, name, type, summary, description, license, hosting, source, repo, homepage, works_with, tags, review_status, latest_revision, search_document, embedding, embedding_model, created_at)
         VALUES (:id, :name, :type, :summary, :description, :license, :hosting, :source, :repo, :homepage, :worksWith::jsonb, :tags::jsonb, :reviewStatus, :latestRevision,
           setweight(to_tsvector('english', :name), 'A') || setweight(to_tsvector('english', :summary), 'B') || setweight(to_tsvector('english', :rest), 'C'),
           :embedding::real[], :model, COALESCE(:createdAt::timestamptz, now()))
         ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, type = EXCLUDED.type, summary = EXCLUDED.summary, description = EXCLUDED.description, license = EXCLUDED.license,
           hosting = EXCLUDED.hosting, source = EXCLUDED.source, repo = EXCLUDED.repo, homepage = EXCLUDED.homepage, works_with = EXCLUDED.works_with, tags = EXCLUDED.tags,
           review_status = EXCLUDED.review_status, latest_revision = COALESCE(EXCLUDED.latest_revision, c.latest_revision), search_document = EXCLUDED.search_document,
           embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model, updated_at = now()
         WHERE (c.name, c.type, c.summary, c.description, c.license, c.hosting, c.source, c.repo, c.homepage, c.works_with, c.tags, c.review_status, c.embedding_model)
           IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.type, EXCLUDED.summary, EXCLUDED.description, EXCLUDED.license, EXCLUDED.hosting, EXCLUDED.source, EXCLUDED.repo, EXCLUDED.homepage, EXCLUDED.works_with, EXCLUDED.tags, EXCLUDED.review_status, EXCLUDED.embedding_model)
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
      tally(result.artifacts, outcome(rows));
    }
    for (const { record } of parsed) {
      if (record.kind !== 'version') continue;
      touched.add(record.artifactId);
      const rows = await q(
        `INSERT INTO catalog_versions AS c (artifact_id, revision, notes, created_at) VALUES (:artifactId, :revision, :notes, COALESCE(:createdAt::timestamptz, now()))
         ON CONFLICT (artifact_id, revision) DO UPDATE SET notes = EXCLUDED.notes WHERE c.notes IS DISTINCT FROM EXCLUDED.notes RETURNING (xmax = 0) AS inserted`,
        { ...record, createdAt: record.createdAt ?? null },
      );
      tally(result.versions, outcome(rows));
    }
    for (const { line, record } of parsed) {
      if (record.kind !== 'file') continue;
      const placed = hosted.get(line);
      const rows = await q(
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
          sha256: placed?.sha256 ?? record.sha256,
          sizeBytes: placed?.sizeBytes ?? record.sizeBytes,
          mediaType: record.mediaType,
          tools: JSON.stringify(record.tools),
          packs: JSON.stringify(record.packs),
          hosted: Boolean(placed),
          objectKey: placed?.objectKey ?? null,
          generation: placed?.generation ?? null,
        },
      );
      tally(result.files, outcome(rows));
    }
    for (const { record } of parsed) {
      if (record.kind !== 'trust-bundle') continue;
      const rows = await q(
        `INSERT INTO catalog_trust_bundles AS c (id, artifact_id, revision, kind, issuer, statement, subjects, created_at)
         VALUES (:id, :artifactId, :revision, :bundleKind, :issuer, :statement::jsonb, :subjects::jsonb, COALESCE(:createdAt::timestamptz, now()))
         ON CONFLICT (id) DO UPDATE SET artifact_id = EXCLUDED.artifact_id, revision = EXCLUDED.revision, kind = EXCLUDED.kind, issuer = EXCLUDED.issuer, statement = EXCLUDED.statement, subjects = EXCLUDED.subjects
         WHERE (c.artifact_id, c.revision, c.kind, c.issuer, c.statement, c.subjects) IS DISTINCT FROM (EXCLUDED.artifact_id, EXCLUDED.revision, EXCLUDED.kind, EXCLUDED.issuer, EXCLUDED.statement, EXCLUDED.subjects)
         RETURNING (xmax = 0) AS inserted`,
        { ...record, statement: JSON.stringify(record.statement), subjects: JSON.stringify(record.subjects), createdAt: record.createdAt ?? null },
      );
      tally(result.trustBundles, outcome(rows));
    }
    for (const { record } of parsed) {
      if (record.kind !== 'review') continue;
      const rows = await q(
        `INSERT INTO catalog_reviews AS c (id, artifact_id, author, rating, title, body, created_at) VALUES (:id, :artifactId, :author, :rating, :title, :body, COALESCE(:createdAt::timestamptz, now()))
         ON CONFLICT (id) DO UPDATE SET artifact_id = EXCLUDED.artifact_id, author = EXCLUDED.author, rating = EXCLUDED.rating, title = EXCLUDED.title, body = EXCLUDED.body
         WHERE (c.artifact_id, c.author, c.rating, c.title, c.body) IS DISTINCT FROM (EXCLUDED.artifact_id, EXCLUDED.author, EXCLUDED.rating, EXCLUDED.title, EXCLUDED.body)
         RETURNING (xmax = 0) AS inserted`,
        { ...record, createdAt: record.createdAt ?? null },
      );
      tally(result.reviews, outcome(rows));
    }
    await settleLatestRevisions(sequelize, transaction, [...touched]);
  });
  return result;
}

const zero = (): Counts => ({ created: 0, updated: 0, unchanged: 0 });

/** Artifacts without an explicit latest revision take their newest version. */
async function settleLatestRevisions(sequelize: Sequelize, transaction: Transaction, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await sequelize.query(
    `UPDATE catalog_artifacts a SET latest_revision = v.revision
     FROM (SELECT DISTINCT ON (artifact_id) artifact_id, revision FROM catalog_versions ORDER BY artifact_id, created_at DESC, revision DESC) v
     WHERE a.id = v.artifact_id AND a.id IN (:ids) AND (a.latest_revision IS NULL OR NOT EXISTS (SELECT 1 FROM catalog_versions x WHERE x.artifact_id = a.id AND x.revision = a.latest_revision))`,
    { replacements: { ids }, transaction },
  );
}

async function placeFile(options: { sequelize: Sequelize; store: ObjectStore; baseDir?: string }, record: FileRecord, line: number, issues: ImportIssue[]) {
  const check = (sha256: string, sizeBytes: number) => {
    if (record.sha256 && record.sha256 !== sha256) issues.push({ line, message: `sha256 ${record.sha256} does not match the content (${sha256})` });
    if (record.sizeBytes !== undefined && record.sizeBytes !== sizeBytes) issues.push({ line, message: `sizeBytes ${record.sizeBytes} does not match the content (${sizeBytes} bytes)` });
  };
  if (record.objectKey) {
    const object = await options.store.stat(record.objectKey);
    if (!object) {
      issues.push({ line, message: `objectKey "${record.objectKey}" is not in the ${options.store.kind} store (bucket ${options.store.bucket})` });
      return undefined;
    }
    if (object.sizeBytes !== record.sizeBytes) issues.push({ line, message: `sizeBytes ${record.sizeBytes} does not match the stored object (${object.sizeBytes} bytes)` });
    return { sha256: record.sha256!, sizeBytes: object.sizeBytes, objectKey: record.objectKey, generation: object.generation };
  }
  if (record.content === undefined && record.contentFile === undefined) return undefined;
  const objectKey = `${record.artifactId}/${record.revision}/${record.path}`;
  let source: Buffer | { file: string };
  if (record.content !== undefined) source = Buffer.from(record.content, 'utf8');
  else {
    if (!options.baseDir) {
      issues.push({ line, message: 'contentFile needs an import from a file (relative paths resolve against it)' });
      return undefined;
    }
    source = { file: path.resolve(options.baseDir, record.contentFile!) };
  }
  let digest: { sha256: string; sizeBytes: number };
  try {
    digest = await digestOf(source);
  } catch (error) {
    issues.push({ line, message: `cannot read the content: ${(error as Error).message}` });
    return undefined;
  }
  const before = issues.length;
  check(digest.sha256, digest.sizeBytes);
  if (issues.length > before) return undefined;
  // Idempotence: the same bytes already stored under this key are not written again.
  const [existing] = await options.sequelize.query<{ sha256: string; object_generation: string | null }>(
    `SELECT sha256, object_generation FROM catalog_files WHERE artifact_id = :artifactId AND revision = :revision AND path = :path AND object_key = :objectKey`,
    { replacements: { artifactId: record.artifactId, revision: record.revision, path: record.path, objectKey }, type: QueryTypes.SELECT },
  );
  if (existing && existing.sha256 === digest.sha256) {
    const object = await options.store.stat(objectKey);
    if (object && object.generation === existing.object_generation && object.sizeBytes === digest.sizeBytes) return { ...digest, objectKey, generation: object.generation };
  }
  try {
    const put = await options.store.put(objectKey, source);
    if (put.sha256 !== digest.sha256) {
      issues.push({ line, message: `the content changed while importing (sha256 ${digest.sha256}, then ${put.sha256})` });
      return undefined;
    }
    return { sha256: put.sha256, sizeBytes: put.sizeBytes, objectKey, generation: put.generation };
  } catch (error) {
    issues.push({ line, message: `cannot store the content: ${(error as Error).message}` });
    return undefined;
  }
}

async function digestOf(source: Buffer | { file: string }): Promise<{ sha256: string; sizeBytes: number }> {
  const hash = createHash('sha256');
  if (Buffer.isBuffer(source)) return { sha256: hash.update(source).digest('hex'), sizeBytes: source.length };
  let sizeBytes = 0;
  for await (const chunk of createReadStream(source.file, { highWaterMark: 1024 * 1024 })) {
    hash.update(chunk as Buffer);
    sizeBytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), sizeBytes };
}
