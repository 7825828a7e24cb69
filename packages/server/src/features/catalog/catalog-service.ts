import { QueryTypes, type Sequelize } from 'sequelize';
import type { z } from 'zod';
import {
  catalogContract,
  pathFor,
  type Artifact,
  type ArtifactFile,
  type ArtifactSummary,
  type DownloadPlan,
  type RankingResponse,
  type ReviewSummary,
  type TrendingResponse,
  type TrustBundlesResponse,
} from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import { ARTIFACT_COLUMNS, ARTIFACT_JOINS, iso, toArtifactSummary, type ArtifactRow, type FileRow } from './rows.ts';

type ReviewSummaryBody = z.infer<typeof ReviewSummary>;
type TrustBody = z.infer<typeof TrustBundlesResponse>;

export function toArtifactFile(row: FileRow): ArtifactFile {
  return {
    artifactId: row.artifact_id,
    revision: row.revision,
    path: row.path,
    sha256: row.sha256,
    sizeBytes: Number(row.size_bytes),
    mediaType: row.media_type,
    tools: row.tools as ArtifactFile['tools'],
    packs: row.packs as ArtifactFile['packs'],
    hosted: row.hosted,
  };
}

/** Plain functions over the database; handlers only adapt them to HTTP. */
export class CatalogService {
  readonly sequelize: Sequelize;

  constructor(sequelize: Sequelize) {
    this.sequelize = sequelize;
  }

  private select<T extends object>(sql: string, replacements: Record<string, unknown> = {}): Promise<T[]> {
    return this.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
  }

  async summary(id: string): Promise<ArtifactSummary & { description: string; homepage: string | null }> {
    const [row] = await this.select<ArtifactRow>(`SELECT ${ARTIFACT_COLUMNS} FROM catalog_artifacts a ${ARTIFACT_JOINS} WHERE a.id = :id`, { id });
    if (!row) throw new ServiceError('artifact_not_found', `No artifact "${id}" in the catalog. Search with GET /api/artifacts?q=...`);
    return { ...toArtifactSummary(row), description: row.description, homepage: row.homepage };
  }

  async artifact(id: string, apiUrl: string): Promise<Artifact> {
    const found = await this.summary(id);
    // The README is read for the artifact itself only, never for lists and searches of many.
    const [card] = await this.select<{ readme: string }>('SELECT readme FROM catalog_artifacts WHERE id = :id', { id });
    const params = { id };
    return {
      ...found,
      readme: card?.readme ?? '',
      links: {
        self: `${apiUrl}${pathFor(catalogContract.artifact, params)}`,
        versions: `${apiUrl}${pathFor(catalogContract.versions, params)}`,
        files: `${apiUrl}${pathFor(catalogContract.files, params)}`,
        downloadPlan: `${apiUrl}${pathFor(catalogContract.downloadPlan, params)}`,
        trustBundles: `${apiUrl}${pathFor(catalogContract.trustBundles, params)}`,
        reviews: `${apiUrl}${pathFor(catalogContract.reviews, params)}`,
        metadata: `${apiUrl}${pathFor(catalogContract.metadata, params)}`,
        agentBundle: `${apiUrl}${pathFor(catalogContract.agentBundle, params)}`,
      },
    };
  }

  async resolve(repo: string, source: string | undefined, apiUrl: string): Promise<Artifact> {
    const replacements: Record<string, unknown> = {
      repo: repo
        .trim()
        .replace(/^https?:\/\/(www\.)?(huggingface\.co|github\.com)\//i, '')
        .replace(/(?<!\/)\/+$/, ''),
    };
    if (source) replacements.source = source;
    const [row] = await this.select<{ id: string }>(
      `SELECT id FROM catalog_artifacts WHERE lower(repo) = lower(:repo) ${source ? 'AND source = :source' : ''} ORDER BY id LIMIT 1`,
      replacements,
    );
    if (!row)
      throw new ServiceError(
        'artifact_not_found',
        `No artifact for repository "${replacements.repo}"${source ? ` on ${source}` : ''}. Ask for it with POST /api/source-requests.`,
      );
    return this.artifact(row.id, apiUrl);
  }

  async versions(id: string) {
    const artifact = await this.summary(id);
    const rows = await this.select<{ revision: string; notes: string; created_at: Date; file_count: number; total_bytes: string | null }>(
      `SELECT v.revision, v.notes, v.created_at, count(f.path)::int AS file_count, COALESCE(sum(f.size_bytes), 0)::text AS total_bytes
       FROM catalog_versions v LEFT JOIN catalog_files f ON f.artifact_id = v.artifact_id AND f.revision = v.revision
       WHERE v.artifact_id = :id GROUP BY v.revision, v.notes, v.created_at ORDER BY v.created_at DESC, v.revision DESC`,
      { id },
    );
    return {
      artifactId: id,
      rows: rows.map((row) => ({
        artifactId: id,
        revision: row.revision,
        notes: row.notes,
        isLatest: row.revision === artifact.latestRevision,
        fileCount: row.file_count,
        totalBytes: Number(row.total_bytes ?? 0),
        createdAt: iso(row.created_at),
      })),
    };
  }

  /** Files of the latest revision; `tool` keeps files with no tool list or naming the tool. */
  async latestFiles(
    id: string,
    options: { tool?: string; hostedOnly?: boolean; limit?: number; offset?: number } = {},
  ): Promise<{ revision: string | null; rows: FileRow[]; more: boolean }> {
    const artifact = await this.summary(id);
    if (!artifact.latestRevision) return { revision: null, rows: [], more: false };
    const replacements: Record<string, unknown> = { id, revision: artifact.latestRevision, limit: (options.limit ?? 10_000) + 1, offset: options.offset ?? 0 };
    const where = ['artifact_id = :id', 'revision = :revision'];
    if (options.tool) {
      where.push(`(tools = '[]'::jsonb OR tools @> :tool::jsonb)`);
      replacements.tool = JSON.stringify([options.tool]);
    }
    if (options.hostedOnly) where.push('hosted');
    const rows = await this.select<FileRow>(`SELECT * FROM catalog_files WHERE ${where.join(' AND ')} ORDER BY path LIMIT :limit OFFSET :offset`, replacements);
    const limit = options.limit ?? 10_000;
    return { revision: artifact.latestRevision, rows: rows.slice(0, limit), more: rows.length > limit };
  }

  async files(id: string, query: { limit: number; cursor: number; tool?: string }) {
    const { revision, rows, more } = await this.latestFiles(id, { tool: query.tool, limit: query.limit, offset: query.cursor });
    return { artifactId: id, revision, rows: rows.map(toArtifactFile), nextCursor: more ? String(query.cursor + query.limit) : null };
  }

  async plan(id: string, tool: string | undefined, apiUrl: string): Promise<DownloadPlan> {
    const { revision, rows } = await this.latestFiles(id, { tool, hostedOnly: true });
    if (!revision || rows.length === 0) {
      throw new ServiceError(
        'no_hosted_files',
        `Artifact "${id}" has no hosted files${tool ? ` for ${tool}` : ''} to download here. Ask for a mirror with POST /api/artifacts/${id}/mirror-request.`,
      );
    }
    const files = rows.map((row) => ({
      path: row.path,
      sha256: row.sha256,
      sizeBytes: Number(row.size_bytes),
      mediaType: row.media_type,
      downloadUrl: `${apiUrl}${pathFor(catalogContract.download, { id, path: row.path })}`,
      completionUrl: `${apiUrl}${pathFor(catalogContract.completeDownload, { id, path: row.path })}`,
    }));
    return { artifactId: id, revision, tool: (tool ?? null) as DownloadPlan['tool'], files, totalBytes: files.reduce((sum, file) => sum + file.sizeBytes, 0) };
  }

  async downloadableFiles(query: { artifactId?: string; limit: number; tool?: string; pack?: string }) {
    const replacements: Record<string, unknown> = { limit: query.limit };
    const where = ['f.hosted', 'f.revision = a.latest_revision'];
    if (query.artifactId) {
      where.push('f.artifact_id = :artifactId');
      replacements.artifactId = query.artifactId;
    }
    if (query.tool) {
      where.push(`(f.tools = '[]'::jsonb OR f.tools @> :tool::jsonb)`);
      replacements.tool = JSON.stringify([query.tool]);
    }
    if (query.pack) {
      where.push('f.packs @> :pack::jsonb');
      replacements.pack = JSON.stringify([query.pack]);
    }
    const rows = await this.select<FileRow>(
      `SELECT f.* FROM catalog_files f JOIN catalog_artifacts a ON a.id = f.artifact_id WHERE ${where.join(' AND ')} ORDER BY f.artifact_id, f.path LIMIT :limit`,
      replacements,
    );
    return {
      rows: rows.map((row) => ({
        artifactId: row.artifact_id,
        revision: row.revision,
        path: row.path,
        sha256: row.sha256,
        sizeBytes: Number(row.size_bytes),
        tools: row.tools as ArtifactFile['tools'],
        packs: row.packs as ArtifactFile['packs'],
      })),
    };
  }

  /** Trust bundles with a check of every subject digest against the catalog's files. */
  async trustBundles(id: string): Promise<TrustBody> {
    await this.summary(id);
    const bundles = await this.select<{
      id: string;
      revision: string;
      kind: string;
      issuer: string;
      statement: Record<string, unknown>;
      subjects: Array<{ path: string; sha256: string }>;
      created_at: Date;
    }>(`SELECT * FROM catalog_trust_bundles WHERE artifact_id = :id ORDER BY created_at DESC, id`, { id });
    const files = await this.select<{ revision: string; path: string; sha256: string }>(
      `SELECT revision, path, sha256 FROM catalog_files WHERE artifact_id = :id`,
      { id },
    );
    const digests = new Map(files.map((file) => [`${file.revision}\u0000${file.path}`, file.sha256]));
    const mismatches: TrustBody['mismatches'] = [];
    for (const bundle of bundles) {
      for (const subject of bundle.subjects) {
        const expected = digests.get(`${bundle.revision}\u0000${subject.path}`) ?? null;
        if (expected !== subject.sha256) mismatches.push({ bundleId: bundle.id, path: subject.path, expected, found: subject.sha256 });
      }
    }
    return {
      artifactId: id,
      rows: bundles.map((bundle) => ({
        id: bundle.id,
        artifactId: id,
        revision: bundle.revision,
        kind: bundle.kind as TrustBody['rows'][number]['kind'],
        issuer: bundle.issuer,
        statement: bundle.statement,
        subjects: bundle.subjects,
        createdAt: iso(bundle.created_at),
      })),
      consistent: mismatches.length === 0,
      mismatches,
    };
  }

  async reviews(id: string, limit: number) {
    await this.summary(id);
    const rows = await this.select<{ id: string; author: string; rating: number; title: string; body: string; created_at: Date }>(
      `SELECT * FROM catalog_reviews WHERE artifact_id = :id ORDER BY created_at DESC, id LIMIT :limit`,
      { id, limit },
    );
    return {
      artifactId: id,
      rows: rows.map((row) => ({
        id: row.id,
        artifactId: id,
        author: row.author,
        rating: Number(row.rating),
        title: row.title,
        body: row.body,
        createdAt: iso(row.created_at),
      })),
    };
  }

  async reviewSummary(id: string): Promise<ReviewSummaryBody> {
    const artifact = await this.summary(id);
    const rows = await this.select<{ rating: number; count: number }>(
      `SELECT rating, count(*)::int AS count FROM catalog_reviews WHERE artifact_id = :id GROUP BY rating`,
      { id },
    );
    const distribution = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 } as ReviewSummaryBody['distribution'];
    let count = 0;
    let total = 0;
    for (const row of rows) {
      distribution[Number(row.rating) as 1 | 2 | 3 | 4 | 5] = row.count;
      count += row.count;
      total += row.count * Number(row.rating);
    }
    return { artifactId: id, count, averageRating: count ? Math.round((total / count) * 100) / 100 : null, distribution, reviewStatus: artifact.reviewStatus };
  }

  async trending(window: TrendingResponse['window'], limit: number): Promise<TrendingResponse> {
    const intervals: Record<string, string | null> = { '24h': '1 day', '7d': '7 days', '30d': '30 days', all: null };
    const interval = intervals[window];
    const rows = await this.select<ArtifactRow & { pulls: number; counted_from: Date | null }>(
      `SELECT ${ARTIFACT_COLUMNS}, w.pulls::int AS pulls
       FROM (SELECT artifact_id, count(*) AS pulls FROM catalog_pulls ${interval ? `WHERE created_at > now() - interval '${interval}'` : ''} GROUP BY artifact_id) w
       JOIN catalog_artifacts a ON a.id = w.artifact_id ${ARTIFACT_JOINS}
       ORDER BY w.pulls DESC, a.id ASC LIMIT :limit`,
      { limit },
    );
    const [from] = interval ? await this.select<{ from: Date }>(`SELECT now() - interval '${interval}' AS "from"`) : [];
    return {
      window,
      countedFrom: from ? iso(from.from) : null,
      rows: rows.map((row, index) => ({ rank: index + 1, pulls: row.pulls, artifact: toArtifactSummary(row) })),
    };
  }

  async ranking(slug: RankingResponse['slug'], limit: number): Promise<RankingResponse> {
    const typeOf: Record<string, string> = { models: 'model', adapters: 'adapter', datasets: 'dataset', tools: 'tool', embeddings: 'embedding' };
    const definitions: Record<string, { title: string; description: string; where?: string; score: string; order: string }> = {
      'most-downloaded': {
        title: 'Most downloaded',
        description: 'All-time attested pulls (verified completions only).',
        score: 'COALESCE(p.downloads, 0)',
        order: 'score DESC, a.id',
      },
      'top-rated': {
        title: 'Top rated',
        description: 'Average review rating, at least one review; ties by review count.',
        where: 'r.review_count > 0',
        score: 'r.rating',
        order: 'score DESC, review_count DESC, a.id',
      },
      newest: {
        title: 'Newest',
        description: 'Most recently added to the catalog; score is the age in days.',
        score: 'extract(epoch FROM now() - a.created_at) / 86400',
        order: 'a.created_at DESC, a.id',
      },
      verified: {
        title: 'Verified',
        description: 'Artifacts the operator verified against their trust bundles, by attested pulls.',
        where: `a.review_status = 'verified'`,
        score: 'COALESCE(p.downloads, 0)',
        order: 'score DESC, a.id',
      },
    };
    const definition =
      definitions[slug] ??
      ({
        title: `Top ${slug}`,
        description: `Artifacts of type ${typeOf[slug]} by attested pulls, then rating.`,
        where: `a.type = '${typeOf[slug]}'`,
        score: 'COALESCE(p.downloads, 0)',
        order: 'score DESC, r.rating DESC NULLS LAST, a.id',
      } as const);
    const rows = await this.select<ArtifactRow & { score: number }>(
      `SELECT ${ARTIFACT_COLUMNS}, (${definition.score})::float8 AS score FROM catalog_artifacts a ${ARTIFACT_JOINS} ${definition.where ? `WHERE ${definition.where}` : ''} ORDER BY ${definition.order} LIMIT :limit`,
      { limit },
    );
    return {
      slug,
      title: definition.title,
      description: definition.description,
      rows: rows.map((row, index) => ({ rank: index + 1, score: Math.round(Number(row.score) * 100) / 100, artifact: toArtifactSummary(row) })),
    };
  }
}
