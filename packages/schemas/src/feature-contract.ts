import type { ContractTree } from './route.ts';

/** Stable error codes and their HTTP status, with a doc comment on each code that needs one. */
export type ErrorCodeTable = Readonly<Record<string, number>>;

/**
 * What one feature adds to the contract: its routes under their top-level keys, and the error
 * codes only it raises (ts-rest's way: errors declared beside the routes that raise them). The
 * root contract (`contract.ts`) is the list of these; the root merges the routes into `contract`
 * and the codes into `errorCodes`, so a feature's new code edits no central file.
 */
export interface FeatureContract<R extends ContractTree = ContractTree, E extends ErrorCodeTable = ErrorCodeTable> {
  readonly routes: R;
  readonly errors: E;
}

/** Identity function that keeps the literal route and code types of one feature's contract. */
export function defineFeatureContract<const R extends ContractTree, const E extends ErrorCodeTable = Record<never, never>>(feature: {
  routes: R;
  errors?: E;
}): FeatureContract<R, E> {
  return { routes: feature.routes, errors: feature.errors ?? ({} as E) };
}

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type IntersectAll<L> = L extends readonly [infer H, ...infer T] ? H & IntersectAll<T> : unknown;
type RoutesOf<L extends readonly FeatureContract[]> = Simplify<IntersectAll<{ [I in keyof L]: L[I]['routes'] }>>;
type ErrorsOf<L extends readonly FeatureContract[]> = Simplify<IntersectAll<{ [I in keyof L]: L[I]['errors'] }>>;

/**
 * Joins tables of one kind into one, refusing a key two of them declare: two features claiming
 * one contract key or one error code would otherwise see one silently replace the other. It throws
 * while `@svc/schemas` loads, so every test, the server and the client fail at once.
 */
export function mergeUnique(what: string, tables: readonly { readonly name: string; readonly table: object }[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  const owner = new Map<string, string>();
  for (const { name, table } of tables) {
    for (const [key, value] of Object.entries(table)) {
      const first = owner.get(key);
      if (first !== undefined) throw new Error(`${what} "${key}" is declared twice: by ${first} and by ${name}`);
      owner.set(key, name);
      merged[key] = value;
    }
  }
  return merged;
}

const nameOf = (feature: FeatureContract) => Object.keys(feature.routes).join('+') || 'a feature without routes';

/** The routes of every feature in the list, in its order (the order of OpenAPI, the client and the docs). */
export function mergeFeatureRoutes<const L extends readonly FeatureContract[]>(features: L): RoutesOf<L> {
  return mergeUnique(
    'the contract key',
    features.map((f) => ({ name: nameOf(f), table: f.routes })),
  ) as RoutesOf<L>;
}

/** The error codes the features in the list declare, merged; a code two declare throws. */
export function mergeFeatureErrors<const L extends readonly FeatureContract[]>(features: L): ErrorsOf<L> {
  return mergeUnique(
    'the error code',
    features.map((f) => ({ name: nameOf(f), table: f.errors })),
  ) as ErrorsOf<L>;
}
