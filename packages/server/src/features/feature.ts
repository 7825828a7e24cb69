import type { Contract } from '@svc/schemas';
import type { PrincipalResolver } from '../http/auth.ts';
import type { HandlersOf } from '../http/handler-types.ts';

/** Every route's handler, under the contract's top-level keys. */
export type ContractHandlers = HandlersOf<Contract>;

/**
 * What every `features/<f>/index.ts` builds with `create<F>Feature(deps, given?)`: the handlers
 * of the contract keys it owns (one or several, e.g. identity owns `oauth` and `developerKeys`),
 * and optionally the credential resolvers it adds and how to stop its background work. A
 * feature may return more (the services other features are given), beside these.
 *
 * @example
 * return { handlers: { requests: createRequestsHandlers(store) }, store } satisfies Feature<'requests'>;
 */
export interface Feature<K extends keyof Contract = keyof Contract> {
  readonly handlers: Pick<ContractHandlers, K>;
  /** Credential resolvers this feature adds (the operator's is built in). */
  readonly resolvers?: readonly PrincipalResolver[];
  /** Stops its background work on shutdown: after the HTTP drain and the scheduler, before the database closes. */
  readonly close?: () => Promise<void>;
  /** The services other features are given (`catalog.catalog`, `pdf.service`, ...). */
  readonly [service: string]: unknown;
}

/** Any feature, whichever keys it owns. */
export interface AnyFeature {
  readonly handlers: Partial<ContractHandlers>;
  readonly resolvers?: readonly PrincipalResolver[];
  readonly close?: () => Promise<void>;
  readonly [service: string]: unknown;
}

/** The contract keys some feature in the list owns. */
type OwnedKeys<F> = F extends { readonly handlers: infer H } ? keyof H : never;
/** Contract keys no feature owns: a route without a handler. */
type Unowned<List extends readonly AnyFeature[]> = Exclude<keyof Contract, OwnedKeys<List[number]>>;
/** Nothing when every key is owned; else a demand the list cannot meet, whose property names the key. */
type EveryKeyOwned<List extends readonly AnyFeature[]> = [Unowned<List>] extends [never]
  ? unknown
  : { readonly [K in Unowned<List>]: `no feature in the list owns the contract key ${K}` };

export interface Features {
  handlers: ContractHandlers;
  resolvers: PrincipalResolver[];
  /** Background work to stop on shutdown, in order of start (the server stops them in reverse). */
  closers: Array<() => Promise<void>>;
}

/**
 * Joins the features' handlers, resolvers and closers. A contract key that no feature owns is a
 * compile error naming the key (the list must then get the feature that owns it); a key two
 * features claim is an error at start.
 */
export function combineFeatures<const List extends readonly AnyFeature[]>(features: List & EveryKeyOwned<List>): Features {
  const handlers: Record<string, unknown> = {};
  const resolvers: PrincipalResolver[] = [];
  const closers: Array<() => Promise<void>> = [];
  for (const feature of features) {
    for (const [key, value] of Object.entries(feature.handlers)) {
      if (key in handlers) throw new Error(`two features own the contract key "${key}"`);
      handlers[key] = value;
    }
    resolvers.push(...(feature.resolvers ?? []));
    if (feature.close) closers.push(feature.close);
  }
  return { handlers: handlers as ContractHandlers, resolvers, closers };
}
