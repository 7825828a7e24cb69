import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { builtinModels } from '../builtin/builtin-models.ts';
import { integer, withoutTrailingSlash } from '../../env-values.ts';
import { capabilities, type Capability } from '../provider.ts';
import { balancingStrategies, type BalancingStrategy, type DeploymentSettings, ModelsFileDeployment, routingFrom } from './deployment-config.ts';

/** How an upstream answers rerank: Cohere/Jina/vLLM's `/v1/rerank`, or TEI's native `/rerank` (`{ query, texts }` in, `[{ index, score }]` out). */
export const rerankApis = ['cohere', 'tei'] as const;
export type RerankApi = (typeof rerankApis)[number];

/** One OpenAI-compatible upstream, resolved: the key is read, never shown. */
export interface UpstreamSettings {
  id: string;
  label: string;
  /** Up to and including `/v1`: `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  apiKey: string | undefined;
  /** Time allowed until the upstream's status and headers arrive (connect included). */
  timeoutMs: number;
  /** Time allowed between two pieces of a body once it started. */
  idleTimeoutMs: number;
  rerankApi: RerankApi;
  /** Where rerank requests go; defaults from `rerankApi` and the base URL. */
  rerankUrl: string;
}

/** One model an upstream serves under a public id. */
export interface UpstreamModelSettings {
  id: string;
  upstream: string;
  /** What the upstream calls it (an alias maps a public id onto it). */
  upstreamModel: string;
  capabilities: Capability[];
  label: string;
  description: string;
  dimensions: number | undefined;
  fallbacks: string[];
  /** Where calls go, balanced by `balancing`: one deployment (`upstream`, `upstreamModel` above) unless the models file lists several. */
  deployments: DeploymentSettings[];
  balancing: BalancingStrategy;
}

const UpstreamEnv = z.looseObject({
  SVC_UPSTREAM_BASE_URL: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL such as https://api.openai.com/v1' }).optional(),
  SVC_UPSTREAM_API_KEY: z.string().min(1).optional(),
  SVC_UPSTREAM_MODELS: z.string().optional(),
  SVC_UPSTREAM_TIMEOUT_MS: integer(100, 3_600_000, 'milliseconds').default(60_000),
  SVC_UPSTREAM_IDLE_TIMEOUT_MS: integer(100, 3_600_000, 'milliseconds').default(60_000),
  SVC_UPSTREAM_RERANK_API: z.enum(rerankApis).default('cohere'),
  SVC_MODELS_FILE: z.string().min(1).optional(),
  SVC_SSE_KEEPALIVE_MS: integer(10, 600_000, 'milliseconds').default(15_000),
  SVC_UPSTREAM_COOLDOWN_FAILURES: integer(1, 100, 'a count of failures').default(3),
  SVC_UPSTREAM_COOLDOWN_MS: integer(100, 3_600_000, 'milliseconds').default(5_000),
  SVC_UPSTREAM_COOLDOWN_MAX_MS: integer(100, 3_600_000, 'milliseconds').default(300_000),
  SVC_UPSTREAM_RETRY_WINDOW_MS: integer(0, 3_600_000, 'milliseconds').default(30_000),
  SVC_UPSTREAM_RETRY_BACKOFF_MS: integer(0, 60_000, 'milliseconds').default(100),
});
type UpstreamEnv = z.output<typeof UpstreamEnv>;

/**
 * OpenAI-compatible upstreams and their models (none: only the built-in engine), and stream
 * keep-alives. The object is loose because a models file's `api_key_env` names a variable of its
 * own choosing. The models file is read here, at start-up, with every issue naming its entry.
 */
export const inferenceConfigFrom = UpstreamEnv.transform((env, context) => {
  const issues: string[] = [];
  const variable = (name: string) => (typeof env[name] === 'string' ? env[name] : undefined);
  const inference = readInferenceConfig(env, variable, issues);
  for (const message of issues) context.addIssue({ code: 'custom', message, input: env });
  return inference;
});

export type InferenceConfig = z.output<typeof inferenceConfigFrom>;

const publicId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,255}$/, 'expected 1 to 256 letters, digits or . _ : / @ + -');

const ModelsFileUpstream = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'expected 1 to 64 lower-case letters, digits, _ or -'),
  label: z.string().min(1).max(200).optional(),
  base_url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name')
    .optional(),
  api_key: z.string().min(1).optional(),
  timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
  idle_timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
  rerank_api: z.enum(rerankApis).optional(),
  rerank_url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).optional(),
});

const ModelsFileModel = z.strictObject({
  id: publicId,
  /** The one upstream serving the model; or `deployments`, several (exactly one of the two). */
  upstream: z.string().min(1).optional(),
  deployments: z.array(ModelsFileDeployment).min(1).max(16).optional(),
  balancing: z.enum(balancingStrategies).default('weighted'),
  upstream_model: z.string().min(1).max(256).optional(),
  capabilities: z.array(z.enum(capabilities)).min(1).optional(),
  label: z.string().min(1).max(200).optional(),
  description: z.string().max(2000).optional(),
  dimensions: z.number().int().min(1).max(65_536).optional(),
  fallbacks: z.array(z.string().min(1)).max(8).default([]),
});

const ModelsFile = z.strictObject({
  upstreams: z.array(ModelsFileUpstream).max(64).default([]),
  models: z.array(ModelsFileModel).max(1024).default([]),
  defaults: z.partialRecord(z.enum(capabilities), z.string().min(1)).default({}),
});
export type ModelsFile = z.input<typeof ModelsFile>;

/** `models[2].fallbacks[0]`: where an issue is, as a user reads the file. */
function entryPath(path: readonly PropertyKey[]): string {
  return path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`)).join('');
}

/** The capability a bare model id most likely has, for `SVC_UPSTREAM_MODELS` entries without `=capability`. */
function guessCapabilities(id: string): Capability[] {
  if (/rerank/i.test(id)) return ['rerank'];
  if (/embed/i.test(id)) return ['embeddings'];
  return ['chat'];
}

/**
 * `gpt-4o-mini,text-embedding-3-small,bge-reranker=rerank,qwen=chat+embeddings`: ids the
 * upstream serves, each optionally `=capabilities` (joined by `+`). Without one, an id naming
 * "embed" is an embeddings model, "rerank" a reranker, anything else a chat model. `=` and `+`
 * rather than `:` because Ollama's ids hold colons (`llama3.1:8b`).
 */
function parseModelList(list: string, issues: string[]): Array<{ id: string; capabilities: Capability[] }> {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .flatMap((entry) => {
      const [id = '', named] = entry.split('=', 2).map((part) => part.trim());
      if (!publicId.safeParse(id).success) {
        issues.push(`SVC_UPSTREAM_MODELS: "${entry}" is not a model id (letters, digits or . _ : / @ + -)`);
        return [];
      }
      if (named === undefined) return [{ id, capabilities: guessCapabilities(id) }];
      const parts = named.split('+').map((part) => part.trim());
      const unknown = parts.filter((part) => !(capabilities as readonly string[]).includes(part));
      if (unknown.length > 0) {
        issues.push(`SVC_UPSTREAM_MODELS: "${entry}": unknown capability ${unknown.map((part) => `"${part}"`).join(', ')} (one of ${capabilities.join(', ')})`);
        return [];
      }
      return [{ id, capabilities: parts as Capability[] }];
    });
}

/** TEI serves its native rerank at the server's root, beside `/v1`; Cohere-shaped servers under it. */
function defaultRerankUrl(baseUrl: string, api: RerankApi): string {
  return api === 'tei' ? `${baseUrl.replace(/\/v1$/, '')}/rerank` : `${baseUrl}/rerank`;
}

/**
 * The upstreams and their models, from `SVC_UPSTREAM_*` (one upstream, id `upstream`) and
 * `SVC_MODELS_FILE` (several, with aliases, fallbacks and defaults). Issues are collected, each
 * naming its entry (`models[2].fallbacks[0]: unknown model "x"`), so the operator fixes all at once.
 * `variable` reads the environment variable a models file's `api_key_env` names.
 */
function readInferenceConfig(env: UpstreamEnv, variable: (name: string) => string | undefined, issues: string[]) {
  const upstreams: UpstreamSettings[] = [];
  const models: UpstreamModelSettings[] = [];
  /** Where each model was defined, as the operator reads it (parallel to `models`). */
  const origins: string[] = [];
  let defaults: Partial<Record<Capability, string>> = {};
  const common = { timeoutMs: env.SVC_UPSTREAM_TIMEOUT_MS, idleTimeoutMs: env.SVC_UPSTREAM_IDLE_TIMEOUT_MS };

  if (env.SVC_UPSTREAM_BASE_URL !== undefined) {
    const baseUrl = withoutTrailingSlash(env.SVC_UPSTREAM_BASE_URL);
    upstreams.push({
      id: 'upstream',
      label: 'OpenAI-compatible upstream',
      baseUrl,
      apiKey: env.SVC_UPSTREAM_API_KEY,
      ...common,
      rerankApi: env.SVC_UPSTREAM_RERANK_API,
      rerankUrl: defaultRerankUrl(baseUrl, env.SVC_UPSTREAM_RERANK_API),
    });
    const listed = parseModelList(env.SVC_UPSTREAM_MODELS ?? '', issues);
    if (listed.length === 0 && env.SVC_UPSTREAM_MODELS === undefined)
      issues.push('SVC_UPSTREAM_MODELS: name the model ids the upstream serves (comma-separated), e.g. gpt-4o-mini,text-embedding-3-small');
    for (const { id, capabilities: caps } of listed) {
      origins.push(`SVC_UPSTREAM_MODELS "${id}"`);
      models.push({
        id,
        upstream: 'upstream',
        upstreamModel: id,
        capabilities: caps,
        label: id,
        description: `${id}, served by the OpenAI-compatible upstream.`,
        dimensions: undefined,
        fallbacks: [],
        deployments: [{ upstream: 'upstream', upstreamModel: id, weight: 1, maxInFlight: undefined }],
        balancing: 'weighted',
      });
    }
  } else if (env.SVC_UPSTREAM_MODELS !== undefined || env.SVC_UPSTREAM_API_KEY !== undefined) {
    issues.push('SVC_UPSTREAM_BASE_URL: required when SVC_UPSTREAM_MODELS or SVC_UPSTREAM_API_KEY is set');
  }

  if (env.SVC_MODELS_FILE !== undefined) {
    const file = readModelsFile(env.SVC_MODELS_FILE, issues);
    if (file) {
      file.upstreams.forEach((entry, index) => {
        const where = `upstreams[${index}]`;
        if (upstreams.some((upstream) => upstream.id === entry.id)) issues.push(`${where}.id: upstream "${entry.id}" is defined twice`);
        if (entry.api_key !== undefined && entry.api_key_env !== undefined) issues.push(`${where}: give api_key_env or api_key, not both`);
        const apiKey = entry.api_key_env !== undefined ? variable(entry.api_key_env) : entry.api_key;
        if (entry.api_key_env !== undefined && !apiKey) issues.push(`${where}.api_key_env: environment variable ${entry.api_key_env} is not set`);
        const baseUrl = withoutTrailingSlash(entry.base_url);
        const rerankApi = entry.rerank_api ?? 'cohere';
        upstreams.push({
          id: entry.id,
          label: entry.label ?? `OpenAI-compatible upstream "${entry.id}"`,
          baseUrl,
          apiKey: apiKey || undefined,
          timeoutMs: entry.timeout_ms ?? common.timeoutMs,
          idleTimeoutMs: entry.idle_timeout_ms ?? common.idleTimeoutMs,
          rerankApi,
          rerankUrl: entry.rerank_url ?? defaultRerankUrl(baseUrl, rerankApi),
        });
      });
      file.models.forEach((entry, index) => {
        const where = `models[${index}]`;
        const deployments = modelDeployments(entry, where, upstreams, issues);
        const first = deployments[0] ?? { upstream: entry.upstream ?? '', upstreamModel: entry.upstream_model ?? entry.id };
        origins.push(where);
        models.push({
          id: entry.id,
          upstream: first.upstream,
          upstreamModel: first.upstreamModel,
          capabilities: entry.capabilities ?? guessCapabilities(first.upstreamModel),
          label: entry.label ?? entry.id,
          description:
            entry.description ??
            (deployments.length > 1
              ? `${first.upstreamModel}, served by ${deployments.length} deployments (${deployments.map((deployment) => `"${deployment.upstream}"`).join(', ')}).`
              : `${first.upstreamModel}, served by upstream "${first.upstream}".`),
          dimensions: entry.dimensions,
          fallbacks: entry.fallbacks,
          deployments,
          balancing: entry.balancing,
        });
      });
      defaults = file.defaults;
    }
  }

  checkReferences(models, origins, defaults, issues);
  return {
    upstreams,
    models,
    /** Per operation, the model a request without `model` uses. */
    defaults,
    /** SSE comment sent when a stream was silent this long. */
    keepAliveMs: env.SVC_SSE_KEEPALIVE_MS,
    /** Retries on sibling deployments and each deployment's cooldown (deployment-config.ts). */
    routing: routingFrom(env),
  };
}

/**
 * A models-file model's deployments: its `deployments`, or its one `upstream` as a deployment of
 * weight 1. Each names a known upstream; `upstream_model` on a deployment overrides the model's.
 */
function modelDeployments(
  entry: z.output<typeof ModelsFileModel>,
  where: string,
  upstreams: readonly UpstreamSettings[],
  issues: string[],
): DeploymentSettings[] {
  const known = () => upstreams.map((upstream) => upstream.id).join(', ') || 'none';
  if ((entry.upstream === undefined) === (entry.deployments === undefined)) {
    issues.push(`${where}: give "upstream" (one) or "deployments" (several), exactly one of the two`);
    return [];
  }
  const listed = entry.deployments ?? [{ upstream: entry.upstream!, weight: 1, upstream_model: undefined, max_in_flight: undefined }];
  const deployments: DeploymentSettings[] = [];
  listed.forEach((deployment, place) => {
    const at = entry.deployments ? `${where}.deployments[${place}]` : where;
    if (!upstreams.some((upstream) => upstream.id === deployment.upstream))
      issues.push(`${at}.upstream: unknown upstream "${deployment.upstream}" (known: ${known()})`);
    const upstreamModel = deployment.upstream_model ?? entry.upstream_model ?? entry.id;
    if (deployments.some((other) => other.upstream === deployment.upstream && other.upstreamModel === upstreamModel))
      issues.push(`${at}: upstream "${deployment.upstream}" with model "${upstreamModel}" is listed twice`);
    deployments.push({ upstream: deployment.upstream, upstreamModel, weight: deployment.weight, maxInFlight: deployment.max_in_flight });
  });
  return deployments;
}

function readModelsFile(path: string, issues: string[]): z.output<typeof ModelsFile> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    issues.push(`SVC_MODELS_FILE: cannot read ${JSON.stringify(path)} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    issues.push(`SVC_MODELS_FILE: ${JSON.stringify(path)} is not JSON: ${(error as Error).message}`);
    return undefined;
  }
  const parsed = ModelsFile.safeParse(json);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) issues.push(`${entryPath(issue.path) || 'models file'}: ${issue.message}`);
    return undefined;
  }
  return parsed.data;
}

/** Ids are unique across the built-in engine and the upstreams; fallbacks and defaults name known models (built-in ones too) able to do the job. */
function checkReferences(models: UpstreamModelSettings[], origins: readonly string[], defaults: Partial<Record<Capability, string>>, issues: string[]): void {
  const known = new Set(builtinModels.map((model) => model.id));
  models.forEach((model, index) => {
    if (known.has(model.id)) issues.push(`${origins[index]}.id: model "${model.id}" is defined twice (or is a built-in model's id)`);
    known.add(model.id);
  });
  const knownList = () => [...known].join(', ');
  models.forEach((model, index) => {
    model.fallbacks.forEach((fallback, place) => {
      if (!known.has(fallback)) issues.push(`${origins[index]}.fallbacks[${place}]: unknown model "${fallback}" (known: ${knownList()})`);
      else if (fallback === model.id) issues.push(`${origins[index]}.fallbacks[${place}]: a model cannot fall back on itself`);
    });
  });
  for (const [capability, id] of Object.entries(defaults)) {
    if (!known.has(id)) issues.push(`defaults.${capability}: unknown model "${id}" (known: ${knownList()})`);
    const model = models.find((entry) => entry.id === id);
    if (model && !model.capabilities.includes(capability as Capability))
      issues.push(`defaults.${capability}: model "${id}" cannot serve ${capability} (it serves ${model.capabilities.join(', ')})`);
  }
}
