/**
 * A tool's JSON Schema made small without changing what it accepts: MCP hosts put every tool
 * definition into the model's context, so `tools/list` is paid for in tokens on every turn.
 * Three rewrites, each leaving the set of valid documents as it was:
 * - `$defs` no `$ref` reaches are dropped (the contract's renderer keeps a body's definition after
 *   inlining it as the root);
 * - a subschema written out two or more times is written once, in `$defs`, and referenced where it
 *   was (within the same document: a tool's schema must resolve on its own, as the client gets it);
 * - a `description` that only restates a `const` ("Always `x`.") is dropped;
 * - keywords that accept everything (`additionalProperties: {}`, `propertyNames: {type: string}`:
 *   a property name is always a string) are dropped;
 * - what every branch of a `oneOf`/`anyOf` of objects says alike is said once, beside it
 *   (factorBranches: `oneOf(X and Bi)` is `X and oneOf(Bi)`).
 * Draft 2020-12, as the contract renders: `$ref` beside other keywords is allowed. A schema that
 * uses `unevaluatedProperties`/`unevaluatedItems` gets only the first three (those keywords see
 * what sibling and nested keywords evaluated, so moving or dropping one could change them).
 */

export type JsonSchema = Record<string, unknown>;

const isObject = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keywords whose value is one subschema. */
const ONE = ['additionalProperties', 'items', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems'];
/** Keywords whose value is an array of subschemas. */
const MANY = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
/** Keywords whose value is a map of name to subschema ($defs is walked apart). */
const MAPS = ['properties', 'patternProperties', 'dependentSchemas'];

/** A place a subschema sits: its parent object and key, so it can be replaced. */
interface Slot {
  readonly holder: Record<string, unknown> | unknown[];
  readonly key: string | number;
  /** The property name it describes, when it is one (a readable name for a shared definition). */
  readonly name?: string | undefined;
}

/** Calls `visit` for every subschema below `schema` (not `schema` itself), children before parents. */
function eachSubschema(schema: JsonSchema, visit: (sub: JsonSchema, slot: Slot) => void): void {
  const at = (holder: Record<string, unknown> | unknown[], key: string | number, name?: string) => {
    const sub = (holder as Record<string | number, unknown>)[key];
    if (!isObject(sub)) return;
    eachSubschema(sub, visit);
    visit(sub, { holder, key, name });
  };
  for (const keyword of ONE) if (keyword in schema) at(schema, keyword);
  for (const keyword of MANY) {
    const list = schema[keyword];
    if (Array.isArray(list)) for (let index = 0; index < list.length; index++) at(list, index);
  }
  for (const keyword of MAPS) {
    const map = schema[keyword];
    if (isObject(map)) for (const name of Object.keys(map)) at(map, name, keyword === 'properties' ? name : undefined);
  }
}

const DEF_PREFIX = '#/$defs/';

/** The names of `$defs` that a `$ref` in `schema` (outside `$defs`) reaches, directly or through other definitions. */
function reachedDefs(schema: JsonSchema, defs: Record<string, JsonSchema>): Set<string> {
  const reached = new Set<string>();
  const follow = (node: unknown): void => {
    if (Array.isArray(node)) for (const item of node) follow(item);
    else if (isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string' && value.startsWith(DEF_PREFIX)) {
          const name = decodeURIComponent(value.slice(DEF_PREFIX.length));
          if (!reached.has(name) && defs[name]) {
            reached.add(name);
            follow(defs[name]);
          }
        } else if (key !== '$defs') follow(value);
      }
    }
  };
  follow(schema);
  return reached;
}

/** "Always `x`." under a `const` says what the `const` says. */
function dropConstEchoes(schema: JsonSchema): void {
  const drop = (sub: JsonSchema) => {
    if ('const' in sub && typeof sub.description === 'string' && sub.description === `Always \`${String(sub.const)}\`.`) delete sub.description;
  };
  eachSubschema(schema, drop);
  for (const def of Object.values((schema.$defs ?? {}) as Record<string, JsonSchema>)) {
    drop(def);
    eachSubschema(def, drop);
  }
}

/** `additionalProperties: {}` and `propertyNames: {type: "string"}` accept everything: said or not, the same documents are valid. */
function dropNoOps(schema: JsonSchema): void {
  const drop = (sub: JsonSchema) => {
    if (isObject(sub.additionalProperties) && Object.keys(sub.additionalProperties).length === 0) delete sub.additionalProperties;
    const names = sub.propertyNames;
    if (isObject(names) && Object.keys(names).length === 1 && names.type === 'string') delete sub.propertyNames;
  };
  drop(schema);
  eachSubschema(schema, drop);
  for (const def of Object.values((schema.$defs ?? {}) as Record<string, JsonSchema>)) {
    drop(def);
    eachSubschema(def, drop);
  }
}

/**
 * Keywords that each constrain a value on their own (none reads a sibling), so a schema is the
 * conjunction of its keywords and may be split between two schemas by keyword. `properties` and
 * `additionalProperties` read each other, and are moved together (factorBranches).
 */
const INDEPENDENT = new Set([
  'type',
  'required',
  'const',
  'enum',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'contentEncoding',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minProperties',
  'maxProperties',
  '$ref',
  'description',
  'default',
]);
/** `items` reads only `prefixItems`, which a movable schema does not have. */
const MOVABLE = new Set([...INDEPENDENT, 'items']);
const same = (values: readonly unknown[]) => values.every((value) => JSON.stringify(value) === JSON.stringify(values[0]));

/**
 * Says once, beside a `oneOf`/`anyOf`, what each of its branches says alike: for branches that are
 * objects of the same property names (each `properties`, `required`, `additionalProperties`,
 * `type` and plain keywords only), the keywords all branches share move up, and each property's
 * shared keywords move up into the parent's `properties` (a branch keeps what differs, such as
 * its `const` and the schema of its items). `oneOf(X and Bi)` is `X and oneOf(Bi)`, and a schema
 * of independent keywords is the conjunction of any split of them, so the same documents are
 * valid. The parent keeps `additionalProperties` with every property named, as the branches did.
 */
function factorBranches(parent: JsonSchema): void {
  for (const keyword of ['oneOf', 'anyOf'] as const) {
    const branches = parent[keyword];
    if (!Array.isArray(branches) || branches.length < 2 || !branches.every(isObject)) continue;
    // The parent says nothing else that the moved keywords could meet (or overwrite).
    if (Object.keys(parent).some((key) => key !== keyword && key !== 'description' && key !== 'default')) continue;
    const movable = (sub: JsonSchema, also: readonly string[]) => Object.keys(sub).every((key) => MOVABLE.has(key) || also.includes(key));
    if (!branches.every((branch) => movable(branch, ['properties', 'additionalProperties']))) continue;
    const propertiesOf = (branch: JsonSchema) => (isObject(branch.properties) ? branch.properties : {}) as Record<string, unknown>;
    const names = branches.map((branch) => Object.keys(propertiesOf(branch)).sort().join('\0'));
    if (!same(names) || !same(branches.map((branch) => branch.additionalProperties))) continue;
    // A property's schema `false` (or `true`) has no keywords to share: left as it is.
    if (!branches.every((branch) => Object.values(propertiesOf(branch)).every(isObject))) continue;
    const up: JsonSchema = {};
    for (const key of Object.keys(branches[0]!)) {
      if (key === 'properties' || key === 'additionalProperties') continue;
      if (!(key in parent) && branches.every((branch) => key in branch) && same(branches.map((branch) => branch[key]))) up[key] = branches[0]![key];
    }
    const upProperties: Record<string, JsonSchema> = {};
    for (const name of Object.keys(propertiesOf(branches[0]!))) {
      const schemas = branches.map((branch) => propertiesOf(branch)[name]);
      const shared: JsonSchema = {};
      if (same(schemas)) Object.assign(shared, schemas[0]);
      else if (schemas.every((schema) => isObject(schema) && movable(schema, [])))
        for (const key of Object.keys(schemas[0] as JsonSchema))
          if (schemas.every((schema) => key in (schema as JsonSchema)) && same(schemas.map((schema) => (schema as JsonSchema)[key])))
            shared[key] = (schemas[0] as JsonSchema)[key];
      upProperties[name] = shared;
    }
    const movedProperties = Object.values(upProperties).some((shared) => Object.keys(shared).length > 0);
    const before = JSON.stringify(parent).length;
    const saved = structuredClone(parent);
    for (const branch of branches) {
      for (const key of Object.keys(up)) delete branch[key];
      const properties = propertiesOf(branch);
      for (const [name, shared] of Object.entries(upProperties)) {
        const schema = properties[name];
        if (Object.keys(shared).length === Object.keys(schema as JsonSchema).length) delete properties[name];
        else for (const key of Object.keys(shared)) delete (schema as JsonSchema)[key];
      }
      if ('properties' in branch && Object.keys(properties).length === 0) delete branch.properties;
      delete branch.additionalProperties;
    }
    const additional = (saved[keyword] as JsonSchema[])[0]!.additionalProperties;
    Object.assign(parent, up);
    if (movedProperties || additional !== undefined) parent.properties = upProperties;
    if (additional !== undefined) parent.additionalProperties = additional;
    // Only where it is shorter: two branches that share little would only move words about.
    if (JSON.stringify(parent).length >= before) {
      for (const key of Object.keys(parent)) delete parent[key];
      Object.assign(parent, saved);
    }
  }
}

/** A definition name not yet taken: the property's own name where there is one. */
function freshName(defs: Record<string, unknown>, wanted: string | undefined): string {
  const base = wanted && /^[A-Za-z][\w-]*$/.test(wanted) ? wanted : 'shared';
  if (!(base in defs)) return base;
  for (let n = 2; ; n++) if (!(`${base}${n}` in defs)) return `${base}${n}`;
}

/**
 * Writes each subschema that appears more than once (by its JSON text) once, in `$defs`, when that
 * is shorter; the largest saving first, until no repeat is worth a definition. A subschema holding
 * `$defs` of its own, or the bare `$ref`s themselves, are left where they are.
 */
function hoistRepeats(schema: JsonSchema): void {
  const defs = (schema.$defs ?? {}) as Record<string, JsonSchema>;
  for (let round = 0; round < 200; round++) {
    const seen = new Map<string, { slots: Slot[]; name?: string | undefined }>();
    const count = (sub: JsonSchema, slot: Slot) => {
      if ('$defs' in sub || (Object.keys(sub).length === 1 && '$ref' in sub)) return;
      const text = JSON.stringify(sub);
      const entry = seen.get(text);
      if (entry) entry.slots.push(slot);
      else seen.set(text, { slots: [slot], name: slot.name });
    };
    eachSubschema(schema, count);
    for (const [name, def] of Object.entries(defs)) {
      eachSubschema(def, count);
      // A definition equal to a repeat elsewhere is that repeat's definition already.
      const entry = seen.get(JSON.stringify(def));
      if (entry) entry.name = `\0${name}`;
    }
    let best: { text: string; slots: Slot[]; name?: string | undefined; saving: number } | undefined;
    for (const [text, entry] of seen) {
      const existing = entry.name?.startsWith('\0');
      const refLength = `{"$ref":"${DEF_PREFIX}${entry.name ?? 'shared'}"}`.length;
      const uses = entry.slots.length;
      if (uses < 2 && !existing) continue;
      const saving = uses * (text.length - refLength) - (existing ? 0 : text.length + refLength);
      if (saving > 0 && (!best || saving > best.saving)) best = { text, slots: entry.slots, name: entry.name, saving };
    }
    if (!best) break;
    let name: string;
    if (best.name?.startsWith('\0')) name = best.name.slice(1);
    else {
      name = freshName(defs, best.name);
      defs[name] = JSON.parse(best.text) as JsonSchema;
    }
    const ref = `${DEF_PREFIX}${encodeURIComponent(name)}`;
    for (const { holder, key } of best.slots) (holder as Record<string | number, unknown>)[key] = { $ref: ref };
  }
  if (Object.keys(defs).length > 0) schema.$defs = defs;
}

/** The same schema, smaller (see the module's comment); `schema` is not changed. */
export function compactJsonSchema(schema: JsonSchema): JsonSchema {
  const copy = structuredClone(schema);
  dropConstEchoes(copy);
  // Unreached definitions go first, or their copies of what the root inlined would count as repeats.
  pruneUnreached(copy);
  if (!JSON.stringify(copy).includes('"unevaluated')) {
    dropNoOps(copy);
    factorBranches(copy);
    eachSubschema(copy, factorBranches);
    for (const def of Object.values((copy.$defs ?? {}) as Record<string, JsonSchema>)) {
      factorBranches(def);
      eachSubschema(def, factorBranches);
    }
  }
  hoistRepeats(copy);
  pruneUnreached(copy);
  return copy;
}

function pruneUnreached(schema: JsonSchema): void {
  const defs = schema.$defs as Record<string, JsonSchema> | undefined;
  if (!defs) return;
  const reached = reachedDefs(schema, defs);
  for (const name of Object.keys(defs)) if (!reached.has(name)) delete defs[name];
  if (Object.keys(defs).length === 0) delete schema.$defs;
}
