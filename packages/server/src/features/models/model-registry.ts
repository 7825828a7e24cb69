import type { z } from 'zod';
import type { EngineInfo, ModelInfo } from '@svc/schemas';

type Engine = z.infer<typeof EngineInfo>;
type Model = z.infer<typeof ModelInfo>;

/** The engines and models this server can serve; features register theirs at start-up. */
export class ModelRegistry {
  private readonly engines = new Map<string, Engine>();
  private readonly models = new Map<string, Model>();

  registerEngine(engine: Engine): void {
    this.engines.set(engine.id, engine);
  }

  registerModel(model: Model): void {
    if (!this.engines.has(model.engine)) throw new Error(`Model ${model.id} names unknown engine ${model.engine}`);
    this.models.set(model.id, model);
  }

  model(id: string): Model | undefined {
    return this.models.get(id);
  }

  list(): { engines: Engine[]; models: Model[] } {
    return { engines: [...this.engines.values()], models: [...this.models.values()] };
  }
}

/** The engine that needs no network and no model weights: classical methods, labelled as such. */
export const BUILTIN_ENGINE: Engine = {
  id: 'builtin',
  kind: 'builtin',
  label: 'Built-in (classical methods, no model weights)',
  available: true,
  description: 'Runs in the server process with no network and no downloaded weights: hashed n-gram embeddings, lexical ranking and extractive methods. Useful everywhere, not a neural model.',
};
