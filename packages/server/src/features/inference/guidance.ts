import { catalogContract, pathFor, type DiscoverResponse, type FindSpecialistResponse, type RouteResponse, type SpecialistMatch } from '@svc/schemas';
import type { Sequelize } from 'sequelize';
import { cosine, embedText, tokenize } from '../../inference/hashed-embeddings.ts';
import type { ModelRegistry } from '../models/index.ts';
import { searchArtifacts } from '../catalog/index.ts';
import { operationCatalogue, type OperationEntry } from './operation-catalogue.ts';

/**
 * Route, discover and find_specialist: ranking by lexical similarity (the built-in hashed
 * embeddings) between the caller's words and what each operation, model and artifact says of
 * itself. Classical and explainable: every result says which words it matched.
 */

const round = (value: number) => Math.round(value * 10_000) / 10_000;

function sharedWords(need: string, text: string): string[] {
  const words = new Set(tokenize(text));
  return [...new Set(tokenize(need))].filter((word) => word.length > 2 && words.has(word));
}

function rankOperations(need: string): Array<{ entry: OperationEntry; score: number; shared: string[] }> {
  const vector = embedText(need);
  return operationCatalogue
    .map((entry) => ({
      entry,
      score: Math.max(0, cosine(vector, embedText(`${entry.title} ${entry.text}`))),
      shared: sharedWords(need, `${entry.title} ${entry.text}`),
    }))
    .sort((a, b) => b.score - a.score || a.entry.operation.localeCompare(b.entry.operation));
}

/** A body's fields name its operation more surely than any description: `messages` is chat. */
function operationOfRequest(request: Record<string, unknown>): OperationEntry | undefined {
  if ('url' in request || 'data_base64' in request)
    return operationCatalogue.find((entry) => entry.operation === ('format' in request ? 'document_extract' : 'pdf_extract'));
  return operationCatalogue.find((entry) => entry.fields.every((field) => field in request));
}

export function routeRequest(models: ModelRegistry, input: { task?: string; request?: Record<string, unknown> }): RouteResponse {
  const modelFor = (entry: OperationEntry) => (entry.capability ? (models.defaultFor(entry.capability)?.id ?? null) : null);
  const requested = typeof input.request?.model === 'string' ? input.request.model : undefined;
  const choose = (entry: OperationEntry, score: number, reason: string) => {
    const named = requested !== undefined && entry.capability && models.model(requested)?.capabilities.includes(entry.capability) ? requested : undefined;
    return { operation: entry.operation, path: entry.path, model: named ?? modelFor(entry), score: round(score), reason };
  };
  const byFields = input.request ? operationOfRequest(input.request) : undefined;
  const ranked = rankOperations(input.task ?? (input.request ? Object.keys(input.request).join(' ') : ''));
  if (byFields) {
    const fields = byFields.fields.filter((field) => field in input.request!).join(', ') || 'url';
    return {
      choice: choose(byFields, 1, `The request carries ${fields}, which is the body of ${byFields.path}.`),
      alternatives: ranked
        .filter((entry) => entry.entry !== byFields && entry.score > 0)
        .slice(0, 3)
        .map((entry) => choose(entry.entry, entry.score, reasonFor(entry))),
    };
  }
  const [best, ...rest] = ranked;
  return {
    choice: choose(best!.entry, best!.score, reasonFor(best!)),
    alternatives: rest
      .filter((entry) => entry.score > 0)
      .slice(0, 3)
      .map((entry) => choose(entry.entry, entry.score, reasonFor(entry))),
  };
}

function reasonFor(ranked: { entry: OperationEntry; score: number; shared: string[] }): string {
  return ranked.shared.length
    ? `Your words ${ranked.shared
        .slice(0, 6)
        .map((word) => `"${word}"`)
        .join(', ')} match what ${ranked.entry.path} does (similarity ${ranked.score.toFixed(2)}).`
    : `Closest by word pieces to what ${ranked.entry.path} does (similarity ${ranked.score.toFixed(2)}); no whole word shared, so treat it as a weak guess.`;
}

async function artifactMatches(sequelize: Sequelize, need: string, limit: number) {
  const query = catalogContract.search.query!.parse({ q: need.slice(0, 500), semantic: '1', explain: '1', limit: String(Math.min(limit, 100)) });
  const page = await searchArtifacts(sequelize, query as never);
  return page.rows;
}

export async function discover(models: ModelRegistry, sequelize: Sequelize, need: string, limit: number): Promise<DiscoverResponse> {
  const vector = embedText(need);
  const operations = rankOperations(need)
    .filter((ranked) => ranked.score > 0)
    .map((ranked) => ({
      kind: 'operation' as const,
      id: ranked.entry.operation,
      title: ranked.entry.title,
      score: round(ranked.score),
      reason: reasonFor(ranked),
      path: ranked.entry.path,
    }));
  const served = models.list().models.map((model) => {
    const text = `${model.label} ${model.description} ${model.tasks.join(' ')}`;
    const score = Math.max(0, cosine(vector, embedText(text)));
    const shared = sharedWords(need, text);
    return {
      kind: 'model' as const,
      id: model.id,
      title: model.label,
      score: round(score),
      reason: `Serves ${model.tasks.join(', ')}${shared.length ? `; matches ${shared.slice(0, 5).join(', ')}` : ''}.`,
    };
  });
  const artifacts = (await artifactMatches(sequelize, need, limit)).map((row) => ({
    kind: 'artifact' as const,
    id: row.id,
    title: row.name,
    score: round(row.score ?? 0),
    reason: `Catalog ${row.type}: ${row.summary}`,
    path: pathFor(catalogContract.artifact, { id: row.id }),
  }));
  const results = [...operations, ...served.filter((model) => model.score > 0), ...artifacts]
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
    .slice(0, limit);
  return { results };
}

export async function findSpecialist(
  models: ModelRegistry,
  sequelize: Sequelize,
  task: string,
  limit: number,
  minScore: number,
): Promise<FindSpecialistResponse> {
  const vector = embedText(task);
  const artifacts: SpecialistMatch[] = (await artifactMatches(sequelize, task, limit)).map((row) => {
    const shared = sharedWords(task, `${row.name} ${row.summary} ${row.tags.join(' ')}`);
    const reasons = [
      `cosine similarity ${(row.score ?? 0).toFixed(3)} between your task and the artifact's name, summary, description and tags`,
      ...(shared.length ? [`shared words: ${shared.slice(0, 8).join(', ')}`] : []),
      `${row.downloads} verified downloads${row.rating !== null ? `, rated ${row.rating.toFixed(1)}/5 by ${row.reviewCount}` : ''}; review status ${row.reviewStatus}`,
    ];
    return { kind: 'artifact', id: row.id, title: row.name, score: round(Math.min(1, row.score ?? 0)), reasons, task: row.type };
  });
  const served: SpecialistMatch[] = models.list().models.map((model) => {
    const text = `${model.label} ${model.description} ${model.tasks.join(' ')}`;
    const score = Math.max(0, Math.min(1, cosine(vector, embedText(text))));
    const shared = sharedWords(task, text);
    return {
      kind: 'model',
      id: model.id,
      title: model.label,
      score: round(score),
      reasons: [
        `served here by the ${model.engine} engine (${model.method ?? 'classical'}) for ${model.tasks.join(', ')}`,
        ...(shared.length ? [`shared words: ${shared.slice(0, 8).join(', ')}`] : []),
      ],
      task: model.tasks[0] ?? null,
    };
  });
  const matches = [...artifacts, ...served]
    .filter((match) => match.score > 0 && match.score >= minScore)
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
    .slice(0, limit);
  return { matches };
}
