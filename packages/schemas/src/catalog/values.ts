import { z } from 'zod';

/**
 * The value sets the spec leaves open ("not shown"), fixed here so they are documented in the
 * OpenAPI document and checked on the way in. Adding a value is a minor contract change.
 */
export const artifactTypes = ['model', 'adapter', 'dataset', 'tool', 'embedding'] as const;
export const ArtifactType = z
  .enum(artifactTypes)
  .meta({ id: 'ArtifactType', description: 'What an artifact is: a model, an adapter (LoRA and the like), a dataset, a tool, or an embedding model.' });

export const licenses = [
  'apache-2.0',
  'mit',
  'bsd-3-clause',
  'cc-by-4.0',
  'cc-by-sa-4.0',
  'cc0-1.0',
  'openrail',
  'llama',
  'gemma',
  'proprietary',
  'other',
] as const;
export const License = z.enum(licenses).meta({ id: 'License', description: 'SPDX-like licence family of an artifact.' });

export const hostings = ['hosted', 'external'] as const;
export const Hosting = z.enum(hostings).meta({
  id: 'Hosting',
  description:
    "`hosted`: files live in this service's object store and can be downloaded with verification; `external`: metadata only, files stay at the source.",
});

export const sources = ['huggingface', 'github', 'ollama', 'upload', 'other'] as const;
export const ArtifactSource = z
  .enum(sources)
  .meta({ id: 'ArtifactSource', description: 'Where an artifact comes from; with `repo` it identifies the upstream for /api/resolve.' });

export const tools = ['transformers', 'sentence-transformers', 'llama.cpp', 'ollama', 'vllm', 'onnxruntime', 'mlx', 'svc'] as const;
export const Tool = z
  .enum(tools)
  .meta({ id: 'Tool', description: 'A runtime an artifact works with (`worksWith`) and that selects the files a plan needs (`tool`).' });

export const reviewStatuses = ['unreviewed', 'community-reviewed', 'verified', 'flagged'] as const;
export const ReviewStatus = z.enum(reviewStatuses).meta({
  id: 'ReviewStatus',
  description: 'Editorial state: `verified` means the operator checked the files against the trust bundle; `flagged` means a problem was reported.',
});

export const searchSorts = ['best', 'relevance', 'newest', 'updated', 'downloads', 'trending', 'rating', 'name'] as const;
export const SearchSort = z.enum(searchSorts).meta({
  id: 'SearchSort',
  description:
    '`best` (default): text rank when q is given, else attested downloads and rating; `relevance`: text or semantic score only; `newest`/`updated`: by time; `downloads`: all-time attested pulls; `trending`: attested pulls in the last 7 days; `rating`: average review rating; `name`: alphabetical.',
});

export const trendingWindows = ['24h', '7d', '30d', 'all'] as const;
export const TrendingWindow = z.enum(trendingWindows).meta({ id: 'TrendingWindow', description: 'Time window of attested pulls counted by /api/trending.' });

export const packs = ['default', 'full', 'weights', 'config', 'docs'] as const;
export const Pack = z.enum(packs).meta({
  id: 'Pack',
  description: "A named subset of an artifact's files: `default` (what a runtime needs), `full` (everything), `weights`, `config`, `docs`.",
});

export const rankingSlugs = ['most-downloaded', 'top-rated', 'newest', 'verified', 'models', 'adapters', 'datasets', 'tools', 'embeddings'] as const;
export const RankingSlug = z
  .enum(rankingSlugs)
  .meta({ id: 'RankingSlug', description: 'The rankings this service computes (all from attested pulls and reviews).' });

export const completionStatuses = ['client-attested', 'already-recorded'] as const;
export const CompletionStatus = z.enum(completionStatuses).meta({ id: 'CompletionStatus' });

/** Query-string enum where an empty value means "not given" (the spec: empty values are omitted). */
export const optionalQueryEnum = <E extends z.ZodEnum>(schema: E) =>
  z
    .union([schema, z.literal('')])
    .optional()
    .transform((value): z.output<E> | undefined => (value === '' || value === undefined ? undefined : (value as z.output<E>)));

/** Query-string text where an empty value means "not given". */
export const optionalQueryText = (max: number) =>
  z
    .string()
    .max(max)
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));
