import type { RequestPart, RouteDefinition } from '@svc/schemas';
import { UsageError } from './failure.ts';

/**
 * A command's flags become one part of its route's request and are checked with the route's own
 * schema before anything is sent, so the CLI never restates a limit the contract already holds:
 * a bad flag is a usage error (exit 2) that names the flag and the contract's limit.
 */
export type FlagPart = 'params' | 'query' | 'body';

/** Request field -> what the user typed it as, where that is not `--<field in kebab-case>` (`value.parent_id` -> `--reply-to`). */
export type FlagNames = Readonly<Record<string, string>>;

/** What the contract says about one field: a number's value range or a text's length, and its default. */
export interface FieldRule {
  kind: 'integer' | 'number' | 'text' | 'other';
  min?: number;
  max?: number;
  fallback?: unknown;
}

/** The zod 4 definition fields this module reads (zod's documented introspection surface, `schema._zod.def`). */
interface Introspectable {
  _zod: {
    def: {
      type: string;
      innerType?: Introspectable;
      in?: Introspectable;
      out?: Introspectable;
      options?: Introspectable[];
      shape?: Record<string, Introspectable>;
      defaultValue?: unknown;
    };
  };
  minValue?: number | null;
  maxValue?: number | null;
  isInt?: boolean;
  minLength?: number | null;
  maxLength?: number | null;
}

const wrappers = new Set(['optional', 'nullable', 'readonly', 'nonoptional', 'catch']);

/** Unwraps defaults, optionals, pipes and unions down to the number or text a flag gives. */
function ruleOf(schema: Introspectable | undefined, fallback?: unknown): FieldRule {
  if (!schema) return { kind: 'other' };
  const def = schema._zod.def;
  if (def.type === 'default' || def.type === 'prefault') return ruleOf(def.innerType, def.defaultValue);
  if (wrappers.has(def.type)) return ruleOf(def.innerType, fallback);
  // A query number arrives as text and is piped into a number: its rule is the number's.
  if (def.type === 'pipe') return def.out?._zod.def.type === 'transform' ? ruleOf(def.in, fallback) : ruleOf(def.out, fallback);
  if (def.type === 'union') {
    for (const option of def.options ?? []) {
      const rule = ruleOf(option, fallback);
      if (rule.kind !== 'other') return rule;
    }
    return { kind: 'other', fallback };
  }
  // `.int()` alone bounds a number by the safe integers, which no user thinks of as a limit.
  const bound = (value: number | null | undefined) => (value === null || value === undefined || Math.abs(value) >= Number.MAX_SAFE_INTEGER ? undefined : value);
  if (def.type === 'number') return { kind: schema.isInt ? 'integer' : 'number', min: bound(schema.minValue), max: bound(schema.maxValue), fallback };
  if (def.type === 'string') return { kind: 'text', min: bound(schema.minLength), max: bound(schema.maxLength), fallback };
  return { kind: 'other', fallback };
}

function fieldSchema(route: RouteDefinition, part: FlagPart, path: string): Introspectable | undefined {
  let schema = route[part] as unknown as Introspectable | undefined;
  for (const name of path.split('.')) {
    while (schema && (wrappers.has(schema._zod.def.type) || schema._zod.def.type === 'default' || schema._zod.def.type === 'pipe')) {
      const def = schema._zod.def;
      schema = def.type === 'pipe' ? def.in : def.innerType;
    }
    schema = schema?._zod.def.shape?.[name];
  }
  return schema;
}

/** The rule of `path` (`limit`, `value.text`) in a route's request part. */
export function fieldRule(route: RouteDefinition, part: FlagPart, path: string): FieldRule {
  return ruleOf(fieldSchema(route, part, path));
}

/** `1..100, default 20`: a flag's limits for its help text, read from the contract. */
export function rangeText(route: RouteDefinition, part: FlagPart, path: string): string {
  const rule = fieldRule(route, part, path);
  if (rule.kind === 'other' || (rule.min === undefined && rule.max === undefined))
    throw new Error(`${path} of ${route.method} ${route.path} has no range to show`);
  const range = rule.max === undefined ? `${rule.min} or more` : `${rule.min ?? 0}..${rule.max}`;
  return rule.fallback === undefined ? range : `${range}, default ${String(rule.fallback)}`;
}

const kebab = (name: string) =>
  name
    .replace(/_/g, '-')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase();

/** What the user typed for `path`: an explicit name, or `--<last field in kebab-case>`. */
export function flagName(path: string, names: FlagNames = {}): string {
  return names[path] ?? `--${kebab(path.split('.').at(-1)!)}`;
}

/** A whole number, or a number, from the text of a flag whose field the contract says is numeric. */
function numberFrom(text: string, rule: FieldRule, flag: string): number {
  if (rule.kind === 'integer') {
    if (!/^\d+$/.test(text)) throw new UsageError(`${flag} takes a whole number, not ${JSON.stringify(text)}`);
    return Number(text);
  }
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new UsageError(`${flag} takes a number, not ${JSON.stringify(text)}`);
  return value;
}

/** The limit of a rule in words, for a refused value: `an integer from 1 to 100`, `at most 500 characters`. */
export function limitText(rule: FieldRule): string {
  if (rule.kind === 'text') {
    if (rule.max !== undefined) return `${rule.min ? `${rule.min} to ` : 'at most '}${rule.max} characters`;
    return `at least ${rule.min} characters`;
  }
  const what = rule.kind === 'integer' ? 'an integer' : 'a number';
  if (rule.max === undefined) return `${what} of ${rule.min ?? 0} or more`;
  return `${what} from ${rule.min ?? 0} to ${rule.max}`;
}

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  values?: unknown[];
  errors?: Issue[][];
  keys?: string[];
}

/** One refused flag in words that name it and the contract's limit. */
function refusal(route: RouteDefinition, part: FlagPart, issue: Issue, names: FlagNames): string {
  const path = issue.path.map(String).join('.');
  const flag = path === '' ? 'the request' : flagName(path, names);
  if (issue.code === 'too_small' || issue.code === 'too_big') {
    const rule = fieldRule(route, part, path);
    const numeric = rule.kind === 'integer' || rule.kind === 'number';
    if (issue.origin === 'number' && numeric) return `${flag} must be ${limitText(rule)}`;
    if (issue.origin === 'string' && rule.kind === 'text') return `${flag} takes ${limitText(rule)}`;
    if (issue.origin === 'array' || issue.origin === 'set')
      return issue.code === 'too_small' ? `${flag}: give at least ${issue.minimum}` : `${flag}: at most ${issue.maximum} at once`;
    if (issue.origin === 'string')
      return issue.code === 'too_small' ? `${flag} takes at least ${issue.minimum} characters` : `${flag} takes at most ${issue.maximum} characters`;
  }
  // An enum, or an enum beside the empty text a query may carry for "absent".
  const values = issue.values ?? issue.errors?.flat().find((inner) => inner.code === 'invalid_value' && (inner.values?.length ?? 0) > 1)?.values;
  if ((issue.code === 'invalid_value' || issue.code === 'invalid_union') && values) return `${flag} takes one of ${values.join(', ')}`;
  if (issue.code === 'unrecognized_keys') return `${(issue.keys ?? []).map((key) => flagName(key, names)).join(', ')} does not apply here`;
  return `${flag}: ${issue.message}`;
}

/**
 * One part of a route's request from a command's flags, checked with the route's own schema.
 * Values left undefined are left out; text given for a numeric field is read as a number first.
 * The answer is the checked input, typed as the client takes it (nothing is transformed twice).
 *
 * @example
 * ```ts
 * const query = requestFrom(catalogContract.trending, 'query', { window: flags.window, limit: flags.limit });
 * await cli.client().catalog.trending({ query });
 * ```
 */
export function requestFrom<R extends RouteDefinition, P extends FlagPart>(
  route: R,
  part: P,
  values: Record<string, unknown>,
  names: FlagNames = {},
): RequestPart<R, P> {
  const schema = route[part];
  if (!schema) throw new Error(`${route.method} ${route.path} takes no ${part}`);
  const input: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(values)) {
    if (value === undefined) continue;
    const rule = typeof value === 'string' ? fieldRule(route, part, field) : undefined;
    input[field] = rule && (rule.kind === 'integer' || rule.kind === 'number') ? numberFrom(value as string, rule, flagName(field, names)) : value;
  }
  const checked = schema.safeParse(input);
  if (!checked.success) throw new UsageError(refusal(route, part, checked.error.issues[0] as Issue, names));
  return input as RequestPart<R, P>;
}
