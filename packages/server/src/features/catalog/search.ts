import { QueryTypes, type Sequelize } from 'sequelize';
import type { SearchResponse, ServerInput, catalogContract } from '@svc/schemas';
import { embedText, HASHED_EMBEDDING_MODEL, tokenize } from '../../inference/hashed-embeddings.ts';
import { ServiceError } from '../../service-error.ts';
import { likePattern } from '../../db/like-pattern.ts';
import { ARTIFACT_COLUMNS, ARTIFACT_JOINS, toArtifactSummary, type ArtifactRow } from './rows.ts';

type SearchQuery = ServerInput<typeof catalogContract.search>['query'];
type Row = ArtifactRow & {
  score: number | null;
  recent: number;
  m_name?: boolean;
  m_summary?: boolean;
  m_description?: boolean;
  m_tags?: boolean;
  m_repo?: boolean;
  embedding_text?: string;
};

const FTS_CONFIG = 'english';
/** Below this cosine similarity a row shares too little with the query to be listed. */
const SEMANTIC_MIN_SCORE = 0.08;
const TRENDING_DAYS = 7;

const vectorLiteral = (vector: Float32Array) => `{${Array.from(vector, (value) => value.toFixed(6)).join(',')}}`;

/** Filters shared by the page and the facet counts. */
function whereClause(query: SearchQuery, replacements: Record<string, unknown>): string[] {
  const where: string[] = [];
  const equal = (column: string, name: string, value: string | undefined) => {
    if (value === undefined) return;
    where.push(`a.${column} = :${name}`);
    replacements[name] = value;
  };
  equal('type', 'type', query.type);
  equal('license', 'license', query.license);
  equal('hosting', 'hosting', query.hosting);
  equal('source', 'source', query.source);
  equal('review_status', 'reviewStatus', query.reviewStatus);
  if (query.worksWith !== undefined) {
    where.push(`a.works_with @> :worksWith::jsonb`);
    replacements.worksWith = JSON.stringify([query.worksWith]);
  }
  return where;
}

function orderBy(sort: string, ranked: boolean): string {
  const byScore = 'score DESC NULLS LAST, downloads DESC, a.id ASC';
  switch (sort) {
    case 'relevance':
      return ranked ? byScore : 'downloads DESC, a.id ASC';
    case 'newest':
      return 'a.created_at DESC, a.id ASC';
    case 'updated':
      return 'a.updated_at DESC, a.id ASC';
    case 'downloads':
      return 'downloads DESC, a.id ASC';
    case 'trending':
      return 'recent DESC, downloads DESC, a.id ASC';
    case 'rating':
      return 'r.rating DESC NULLS LAST, review_count DESC, a.id ASC';
    case 'name':
      return 'lower(a.name) ASC, a.id ASC';
    default:
      return ranked ? byScore : 'downloads DESC, r.rating DESC NULLS LAST, lower(a.name) ASC, a.id ASC';
  }
}

function explanation(row: Row, query: SearchQuery, sort: string, position: number): NonNullable<SearchResponse['rows'][number]['explain']> {
  const matchedFields = (['name', 'summary', 'description', 'tags', 'repo'] as const).filter((field) => row[`m_${field}`]);
  const sortKey = sort === 'best' || sort === 'relevance' ? (query.q ? 'score' : 'downloads') : sort;
  // Four decimals: enough to tell neighbours apart, short enough to read.
  const score = Math.round(Number(row.score ?? 0) * 10_000) / 10_000;
  if (query.q && query.semantic) {
    const queryTerms = new Set(tokenize(query.q));
    const shared = [...new Set(tokenize(row.embedding_text ?? ''))].filter((term) => queryTerms.has(term));
    return {
      method: 'semantic',
      score,
      matchedFields,
      sortKey,
      reason: `#${position}: cosine similarity ${score.toFixed(3)} between the query's ${HASHED_EMBEDDING_MODEL} embedding and the artifact's stored one (name, summary, description, tags); ${shared.length ? `shared words: ${shared.slice(0, 8).join(', ')}` : 'no whole word shared, similarity comes from shared character trigrams'}${sortKey === 'score' ? '' : `; ordered by ${sortKey}`}.`,
    };
  }
  if (query.q) {
    return {
      method: 'fulltext',
      score,
      matchedFields,
      sortKey,
      reason: `#${position}: full-text rank ${score.toFixed(4)} (PostgreSQL ts_rank_cd over name (weight A), summary (B), description and tags (C))${matchedFields.length ? `; matched in ${matchedFields.join(', ')}` : '; matched by substring of name or repo'}${sortKey === 'score' ? '; ties broken by attested downloads' : `; ordered by ${sortKey}`}.`,
    };
  }
  const value =
    sortKey === 'downloads'
      ? `${row.downloads} attested downloads`
      : sortKey === 'trending'
        ? `${row.recent} attested pulls in ${TRENDING_DAYS} days`
        : sortKey === 'rating'
          ? `rating ${row.rating ?? 'none'}`
          : sortKey;
  return { method: 'sort', score: null, matchedFields: [], sortKey, reason: `#${position}: no query text, ordered by ${sortKey} (${value}).` };
}

/**
 * Catalog search. With q: PostgreSQL full-text ranking (websearch syntax) plus substring matches
 * on name and repo; with semantic=1: cosine similarity between the query's hashed embedding and
 * the vectors stored with each artifact, computed in SQL. Offset cursors, as the spec says.
 */
export async function searchArtifacts(sequelize: Sequelize, query: SearchQuery): Promise<SearchResponse> {
  const sort = query.sort ?? 'best';
  if (query.semantic && !query.q) throw new ServiceError('bad_request', 'semantic=1 ranks by similarity to q; give q too.');
  const replacements: Record<string, unknown> = { limit: query.limit + 1, offset: query.cursor, trendingDays: TRENDING_DAYS };
  const where = whereClause(query, replacements);
  let scoreSql = 'NULL::float8';
  let matchSql = '';
  if (query.q) {
    replacements.q = query.q;
    replacements.like = likePattern(query.q);
    matchSql = `, (to_tsvector('${FTS_CONFIG}', a.name) @@ tsq.query) AS m_name, (to_tsvector('${FTS_CONFIG}', a.summary) @@ tsq.query) AS m_summary,
      (to_tsvector('${FTS_CONFIG}', a.description) @@ tsq.query) AS m_description, (to_tsvector('${FTS_CONFIG}', a.tags::text) @@ tsq.query) AS m_tags,
      (a.repo ILIKE :like) AS m_repo, concat_ws(' ', a.name, a.summary, a.description, a.tags::text) AS embedding_text`;
    if (query.semantic) {
      replacements.vector = vectorLiteral(embedText(query.q));
      replacements.minScore = SEMANTIC_MIN_SCORE;
      scoreSql = `(SELECT sum(e * v)::float8 FROM unnest(a.embedding, :vector::real[]) AS u(e, v))`;
      where.push(`(SELECT sum(e * v) FROM unnest(a.embedding, :vector::real[]) AS u(e, v)) >= :minScore`);
    } else {
      scoreSql = `(ts_rank_cd(a.search_document, tsq.query) + CASE WHEN a.name ILIKE :like THEN 0.1 ELSE 0 END)::float8`;
      where.push(`(a.search_document @@ tsq.query OR a.name ILIKE :like OR a.repo ILIKE :like OR a.id ILIKE :like)`);
    }
  }
  const from = `FROM catalog_artifacts a ${query.q ? `CROSS JOIN (SELECT websearch_to_tsquery('${FTS_CONFIG}', :q) AS query) tsq` : ''}
    ${ARTIFACT_JOINS}
    LEFT JOIN (SELECT artifact_id, count(*) AS recent FROM catalog_pulls WHERE created_at > now() - make_interval(days => :trendingDays) GROUP BY artifact_id) t ON t.artifact_id = a.id`;
  const whereSql = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const rows = await sequelize.query<Row>(
    `SELECT ${ARTIFACT_COLUMNS}, COALESCE(t.recent, 0)::int AS recent, ${scoreSql} AS score ${matchSql}
     ${from} ${whereSql}
     ORDER BY ${orderBy(sort, Boolean(query.q))}
     LIMIT :limit OFFSET :offset`,
    { replacements, type: QueryTypes.SELECT },
  );
  const page = rows.slice(0, query.limit);
  const response: SearchResponse = {
    rows: page.map((row, index) => ({
      ...toArtifactSummary(row),
      score: row.score === null ? null : Math.round(Number(row.score) * 10_000) / 10_000,
      ...(query.explain ? { explain: explanation(row, query, sort, query.cursor + index + 1) } : {}),
    })),
    nextCursor: rows.length > query.limit ? String(query.cursor + query.limit) : null,
    sort,
    semantic: query.semantic,
    ...(query.semantic ? { embeddingModel: HASHED_EMBEDDING_MODEL } : {}),
  };
  if (query.summary) response.summary = await facets(sequelize, from, whereSql, replacements);
  return response;
}

async function facets(sequelize: Sequelize, from: string, whereSql: string, replacements: Record<string, unknown>) {
  const rows = await sequelize.query<{ type: string; license: string; hosting: string; source: string; review_status: string; works_with: string[] }>(
    `SELECT a.type, a.license, a.hosting, a.source, a.review_status, a.works_with ${from} ${whereSql}`,
    { replacements, type: QueryTypes.SELECT },
  );
  const count = (values: string[]) => values.reduce<Record<string, number>>((counts, value) => ((counts[value] = (counts[value] ?? 0) + 1), counts), {});
  return {
    total: rows.length,
    type: count(rows.map((row) => row.type)),
    license: count(rows.map((row) => row.license)),
    hosting: count(rows.map((row) => row.hosting)),
    source: count(rows.map((row) => row.source)),
    reviewStatus: count(rows.map((row) => row.review_status)),
    worksWith: count(rows.flatMap((row) => row.works_with)),
  };
}
