import type { z } from 'zod';
import { queryBoolean } from './query.ts';
import type { EveryoneView } from './route.ts';

/** The query flag of every operator view: `everyone=true` asks for every principal's rows. */
export const EVERYONE_FLAG = 'everyone';

/** Declares a route's operator view (`everyone` on its definition); `everyoneQuery` takes the same value. */
export const everyoneView = <const V extends EveryoneView>(view: V): V => view;

/** Who may ask, in words, for descriptions and refusals. */
export const everyoneViewWho = (view: EveryoneView): string =>
  view.scopes && view.scopes.length > 0 ? `the operator or a principal holding ${view.scopes.join(' and ')}` : 'the operator';

type AliasFields<V extends EveryoneView> = V extends { readonly aliases: readonly (infer A extends string)[] }
  ? { [K in A]: ReturnType<typeof optionalFlag> }
  : unknown;

const optionalFlag = () => queryBoolean().optional();

/**
 * The query fields of an operator view, to spread into the list's query: `everyone` and the
 * view's older names. The adapter reads them (any of them true asks for everyone's rows); the
 * handler reads the scope the adapter decided, never these fields.
 */
export function everyoneQuery<const V extends EveryoneView>(view: V): { everyone: ReturnType<typeof optionalFlag> } & AliasFields<V> {
  const who = everyoneViewWho(view);
  const fields: Record<string, z.ZodType> = {
    [EVERYONE_FLAG]: optionalFlag().describe(`Every principal's rows instead of yours: ${who} only (403 \`everyone_view_not_allowed\` for anyone else).`),
  };
  for (const alias of view.aliases ?? []) fields[alias] = optionalFlag().describe(`The older name of \`${EVERYONE_FLAG}\`, still accepted.`);
  return fields as { everyone: ReturnType<typeof optionalFlag> } & AliasFields<V>;
}

/** Whether a parsed query asks for everyone's rows, by the flag or one of its older names. */
export function asksForEveryone(view: EveryoneView, query: unknown): boolean {
  if (typeof query !== 'object' || query === null) return false;
  const fields = query as Record<string, unknown>;
  return fields[EVERYONE_FLAG] === true || (view.aliases ?? []).some((alias) => fields[alias] === true);
}
