import type { z } from 'zod';
import type { EngineInfo, ModelInfo } from '@svc/schemas';
import { ServiceError } from '../../service-error.ts';
import { BUILTIN_MODELS_CREATED } from '../../inference/builtin/builtin-models.ts';
import { capabilities, type Capability, type InferenceProvider, type ModelEntry } from '../../inference/provider.ts';

type Engine = z.infer<typeof EngineInfo>;
type Model = z.infer<typeof ModelInfo>;

/** A model resolved for one call: the entry and the engine that serves it. */
export interface ResolvedModel {
  model: ModelEntry;
  provider: InferenceProvider;
}

/**
 * The engines and models this server serves, and which model each operation uses by default.
 * Engines register at start-up (the built-in one always; upstreams from the configuration);
 * `/v1/models` lists what is here, and every inference call resolves its model through `resolve`.
 */
export class ModelRegistry {
  private readonly providers = new Map<string, InferenceProvider>();
  private readonly models = new Map<string, ModelEntry>();
  /** Models served through an engine of their own rather than their `engine`'s (a pool over several deployments). */
  private readonly modelProviders = new Map<string, InferenceProvider>();
  private readonly defaults = new Map<Capability, string>();

  registerProvider(provider: InferenceProvider): void {
    if (this.providers.has(provider.id)) throw new Error(`Engine ${provider.id} is registered twice`);
    this.providers.set(provider.id, provider);
  }

  /** `servedBy`: the engine this model's calls go through when it is not its `engine` (an upstream model's deployment pool). */
  registerModel(model: ModelEntry, servedBy?: InferenceProvider): void {
    if (!this.providers.has(model.engine)) throw new Error(`Model ${model.id} names unknown engine ${model.engine}`);
    if (this.models.has(model.id)) throw new Error(`Model ${model.id} is registered twice`);
    this.models.set(model.id, model);
    if (servedBy) this.modelProviders.set(model.id, servedBy);
  }

  /** The engine a model's calls go through. */
  providerFor(model: ModelEntry): InferenceProvider {
    return this.modelProviders.get(model.id) ?? this.providers.get(model.engine)!;
  }

  /** The model an operation uses when a request names none; the first model registered for it otherwise. */
  setDefault(capability: Capability, modelId: string): void {
    const model = this.models.get(modelId);
    if (!model) throw new Error(`Default model ${modelId} for ${capability} is not registered`);
    if (!model.capabilities.includes(capability)) throw new Error(`Default model ${modelId} cannot serve ${capability}`);
    this.defaults.set(capability, modelId);
  }

  defaultFor(capability: Capability): ModelEntry | undefined {
    const id = this.defaults.get(capability);
    if (id) return this.models.get(id);
    for (const model of this.models.values()) if (model.capabilities.includes(capability)) return model;
    return undefined;
  }

  /**
   * How a Responses request is served: passed through (`responses`) to a model that speaks the
   * Responses API, or translated to chat. A request naming a model follows that model's
   * capabilities; one naming none goes to the operator's declared `responses` default if there is
   * one, else to chat's default, translated: never to an upstream merely because it was the first
   * registered with the capability. `/v1/models`' `default_for` says the same (defaultIds).
   */
  responsesCapability(requested: string | undefined): 'responses' | 'chat' {
    if (requested !== undefined) return this.models.get(requested)?.capabilities.includes('responses') ? 'responses' : 'chat';
    return this.defaults.has('responses') ? 'responses' : 'chat';
  }

  model(id: string): ModelEntry | undefined {
    return this.models.get(id);
  }

  provider(id: string): InferenceProvider | undefined {
    return this.providers.get(id);
  }

  /** Models that can serve a capability, for error messages and routing. */
  modelsFor(capability: Capability): ModelEntry[] {
    return [...this.models.values()].filter((model) => model.capabilities.includes(capability));
  }

  /**
   * The model a call uses: the one named, or the operation's default. An unknown name is a 422
   * listing the models that can serve the operation, so the caller can correct it at once.
   */
  resolve(capability: Capability, requested: string | undefined): ResolvedModel {
    const model = requested === undefined ? this.defaultFor(capability) : this.models.get(requested);
    // Listed only for an error message: every inference call resolves its model.
    const known = () => this.modelsFor(capability).map((entry) => entry.id);
    if (!model) {
      if (requested === undefined) throw new ServiceError('model_not_found', `No model serves ${capability} on this server.`);
      const message = `Unknown model "${requested}". Models for ${capability}: ${known().join(', ') || 'none'}.`;
      throw new ServiceError('model_not_found', message, { detail: [{ loc: ['body', 'model'], msg: message, type: 'model_not_found' }] });
    }
    if (!model.capabilities.includes(capability)) {
      const message = `Model "${model.id}" cannot serve ${capability}. Models for ${capability}: ${known().join(', ') || 'none'}.${this.declareHint(model, capability)}`;
      throw new ServiceError('model_operation_unsupported', message, {
        detail: [{ loc: ['body', 'model'], msg: message, type: 'model_operation_unsupported' }],
      });
    }
    return { model, provider: this.providerFor(model) };
  }

  /**
   * An upstream model's capabilities are guessed from its id unless declared, so a model that
   * does serve the operation is refused until the operator says so: tell them how.
   */
  private declareHint(model: ModelEntry, capability: Capability): string {
    if (this.providers.get(model.engine)?.kind !== 'openai-compatible') return '';
    const declared = [...model.capabilities, capability];
    return ` If the upstream model does serve ${capability}, declare it: "${model.id}=${declared.join('+')}" in SVC_UPSTREAM_MODELS, or "capabilities": ${JSON.stringify(declared)} on its entry in the models file (SVC_MODELS_FILE).`;
  }

  /** What `/v1/models` shows: every engine and model, never a secret. */
  list(): { engines: Engine[]; models: Model[] } {
    const defaults = this.defaultIds();
    return {
      engines: [...this.providers.values()].map((provider) => ({
        id: provider.id,
        kind: provider.kind,
        label: provider.label,
        available: provider.available(),
        description: provider.description,
      })),
      models: [...this.models.values()].map((model) => this.describe(model, defaults)),
    };
  }

  /** One model as `/v1/models` lists it (`GET /v1/models/{id}`); an id this server does not serve is a 404. */
  get(id: string): Model {
    const model = this.models.get(id);
    if (!model) throw new ServiceError('model_not_found', `No model "${id}" on this server; GET /v1/models lists them.`, { status: 404 });
    return this.describe(model, this.defaultIds());
  }

  /**
   * OpenAI's Model fields, then svc's own. `owned_by` is `svc` for the built-in engine and the
   * upstream's id otherwise. `created` is fixed, never a replica's clock, so every replica lists
   * the same models alike: the built-in engine's release for its models, 0 for upstream models
   * (svc does not know when an upstream made them, and 0 says so rather than invent a date).
   */
  private describe(model: ModelEntry, defaults: ReadonlyMap<Capability, string>): Model {
    const builtin = this.providers.get(model.engine)?.kind === 'builtin';
    return {
      id: model.id,
      object: 'model',
      created: builtin ? BUILTIN_MODELS_CREATED : 0,
      owned_by: builtin ? 'svc' : model.engine,
      engine: model.engine,
      tasks: [...model.capabilities],
      label: model.label,
      description: model.description,
      ...(model.dimensions !== undefined ? { dimensions: model.dimensions } : {}),
      method: model.method,
      fallbacks: [...model.fallbacks],
      default_for: capabilities.filter((capability) => defaults.get(capability) === model.id),
    };
  }

  /** Each operation's default model, found once per answer rather than once per model listed. */
  private defaultIds(): Map<Capability, string> {
    const ids = new Map<Capability, string>();
    for (const capability of capabilities) {
      // A Responses request naming no model may be served by chat's default (responsesCapability).
      const model = this.defaultFor(capability === 'responses' ? this.responsesCapability(undefined) : capability);
      if (model) ids.set(capability, model.id);
    }
    return ids;
  }

  async close(): Promise<void> {
    for (const provider of this.providers.values()) await provider.close?.();
  }
}
