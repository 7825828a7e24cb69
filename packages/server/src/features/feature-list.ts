import type { Contract } from '@svc/schemas';
import type { ServerDeps } from '../deps.ts';
import type { FeatureConfigParsers, FeatureConfigs } from '../server-config.ts';
import { combineFeatures, type AnyFeature, type Features } from './feature.ts';

/** Some of the features' settings parsers: those one feature reads. */
export type SomeConfigParsers = Partial<FeatureConfigParsers>;

interface Step {
  readonly name: string;
  readonly configs: SomeConfigParsers;
  readonly build: (deps: ServerDeps, built: Record<string, unknown>) => unknown;
}

/** The contract keys some built feature owns. */
type OwnedKeys<F> = F extends { readonly handlers: infer H } ? keyof H : never;
/** Nothing when every contract key is owned by a feature of the list; else a demand naming each key that is not. */
type EveryKeyOwned<Built> = [Exclude<keyof Contract, OwnedKeys<Built[keyof Built]>>] extends [never]
  ? unknown
  : { readonly [K in Exclude<keyof Contract, OwnedKeys<Built[keyof Built]>>]: `no feature in the list owns the contract key ${K}` };
/** Nothing when every part of FeatureConfigs has its parser on some line; else a demand naming each part that has none. */
type EveryConfigRead<Read> = [Exclude<keyof FeatureConfigs, Read>] extends [never]
  ? unknown
  : { readonly [K in Exclude<keyof FeatureConfigs, Read>]: `no feature in the list reads the settings deps.config.${K}` };

/**
 * The feature list: each line is one feature, with its settings (the parsers `loadConfig` reads
 * before anything starts, under the `deps.config` keys their `<f>-config.ts` declares) and how it
 * is built from `deps` and what the lines above it built (`given`, by name). Lines are built in
 * order; the list is immutable, each `add` answering a longer one.
 *
 * @example
 * new FeatureList<{ signingKeys: SigningKeys }>()
 *   .add('requests', { requests: requestsConfigFrom }, (deps) => createRequestsFeature(deps))
 *   .add('catalog', { catalog: catalogConfigFrom }, (deps, { requests }) => createCatalogFeature(deps, { requests: requests.store }));
 */
export class FeatureList<Seed extends object, Built extends object = Record<never, never>, Parsers extends SomeConfigParsers = Record<never, never>> {
  readonly #steps: readonly Step[];

  constructor(steps: readonly Step[] = []) {
    this.#steps = steps;
  }

  add<const Name extends string, const Configs extends SomeConfigParsers, F extends AnyFeature>(
    name: Name,
    configs: Configs,
    build: (deps: ServerDeps, built: Seed & Built) => F | Promise<F>,
  ): FeatureList<Seed, Built & { readonly [K in Name]: F }, Parsers & Configs> {
    if (this.#steps.some((step) => step.name === name)) throw new Error(`the feature list names "${name}" twice`);
    return new FeatureList([...this.#steps, { name, configs, build: build as Step['build'] }]);
  }

  /** Every line's settings parsers, for `loadConfig`; a part of FeatureConfigs that no line reads is a compile error here. */
  configParsers(this: FeatureList<Seed, Built, Parsers> & EveryConfigRead<keyof Parsers>): Parsers {
    const parsers: Record<string, unknown> = {};
    for (const step of this.#steps)
      for (const [key, parser] of Object.entries(step.configs)) {
        if (key in parsers) throw new Error(`two features of the list read the settings "${key}"`);
        parsers[key] = parser;
      }
    return parsers as Parsers;
  }

  /** Builds every line in order and joins them; a contract key no line's feature owns is a compile error here. */
  async build(this: FeatureList<Seed, Built, Parsers> & EveryKeyOwned<Built>, deps: ServerDeps, seed: Seed): Promise<Features> {
    const built: Record<string, unknown> = { ...(seed as Record<string, unknown>) };
    const features: AnyFeature[] = [];
    for (const step of this.#steps) {
      const feature = (await step.build(deps, built)) as AnyFeature;
      built[step.name] = feature;
      features.push(feature);
    }
    return combineFeatures(features as never);
  }
}
