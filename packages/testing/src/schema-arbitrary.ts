import fc from 'fast-check';
import { STALL_SHAPES, stallText } from './stall-shapes.ts';

/**
 * fast-check arbitraries from the JSON Schemas the contract's zod schemas produce
 * (`z.toJSONSchema(schema, { io: 'input' })`), so the fuzz suite needs no per-route code.
 * `validValue` draws values meant to pass the schema (refinements JSON Schema cannot express may
 * still refuse some); `invalidVariants` derives values that certainly break it.
 */
export type JsonSchema = {
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  default?: unknown;
};

const MAX_DEPTH = 4;

/** Follows `$ref`s into the root's `$defs`. */
export function resolve(schema: JsonSchema | boolean | undefined, root: JsonSchema): JsonSchema {
  let current: JsonSchema | boolean | undefined = schema;
  for (let hops = 0; hops < 16 && typeof current === 'object' && current.$ref; hops++) {
    const name = current.$ref.replace(/^#\/\$defs\//, '');
    current = current.$ref === '#' ? root : root.$defs?.[name];
  }
  return typeof current === 'object' ? current : {};
}

const anything = () => fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null));

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? minLength + 40, minLength + 40);
  if (schema.pattern) {
    try {
      const pattern = new RegExp(schema.pattern);
      return fc.stringMatching(pattern).filter((value) => value.length >= minLength && value.length <= (schema.maxLength ?? Infinity));
    } catch {
      // A pattern fast-check cannot generate from: plain strings, refused or not.
    }
  }
  switch (schema.format) {
    case 'uri':
    case 'url':
      return fc.webUrl({ validSchemes: ['https'] });
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
    case 'email':
      return fc.emailAddress();
    case 'uuid':
      return fc.uuid();
  }
  const plain = fc.string({ minLength, maxLength });
  // One draw in twenty is a stall shape (stall-shapes.ts), as long as the member allows up to 4 KiB.
  const longest = Math.min(schema.maxLength ?? 4096, 4096);
  const shortest = Math.max(minLength, 1);
  if (longest < shortest) return plain;
  const stalling = fc.tuple(fc.constantFrom(...STALL_SHAPES), fc.integer({ min: shortest, max: longest })).map(([shape, length]) => stallText(shape, length));
  return fc.oneof({ arbitrary: plain, weight: 19 }, { arbitrary: stalling, weight: 1 });
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 1e-6) : -1000);
  const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 1e-6) : Math.max(min + 1000, 1000));
  const boundaries = fc.constantFrom(min, max);
  const inside = integer
    ? fc.integer({ min: Math.ceil(min), max: Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER)) })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return fc.oneof(inside, boundaries);
}

/** Values meant to pass the schema: boundaries included, optional members sometimes left out. */
export function validValue(schema: JsonSchema | boolean | undefined, root: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const resolved = resolve(schema, root);
  if (depth > MAX_DEPTH) return fc.constant(resolved.default ?? null);
  if (resolved.const !== undefined) return fc.constant(resolved.const);
  if (resolved.enum) return fc.constantFrom(...resolved.enum);
  const alternatives = resolved.anyOf ?? resolved.oneOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map((option) => validValue(option, root, depth + 1)));
  if (resolved.allOf?.length) return validValue(resolved.allOf[0], root, depth + 1);
  const type = Array.isArray(resolved.type) ? resolved.type : resolved.type ? [resolved.type] : undefined;
  if (type && type.length > 1) return fc.oneof(...type.map((one) => validValue({ ...resolved, type: one }, root, depth)));
  switch (type?.[0] ?? (resolved.properties ? 'object' : undefined)) {
    case 'string':
      return stringArbitrary(resolved);
    case 'integer':
      return numberArbitrary(resolved, true);
    case 'number':
      return numberArbitrary(resolved, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      if (resolved.prefixItems) return fc.tuple(...resolved.prefixItems.map((item) => validValue(item, root, depth + 1)));
      const minLength = resolved.minItems ?? 0;
      return fc.array(validValue(resolved.items ?? {}, root, depth + 1), { minLength, maxLength: Math.min(resolved.maxItems ?? minLength + 3, minLength + 3) });
    }
    case 'object': {
      const properties = resolved.properties ?? {};
      const required = resolved.required ?? [];
      const members = Object.fromEntries(Object.entries(properties).map(([name, member]) => [name, validValue(member, root, depth + 1)]));
      return fc.record(members, { requiredKeys: required.filter((name) => name in members) });
    }
    default:
      return anything();
  }
}

/** A value of another JSON type than the schema's single declared type, or undefined when it takes several. */
function wrongTypeFor(schema: JsonSchema): unknown {
  if (schema.anyOf || schema.oneOf || Array.isArray(schema.type) || schema.const !== undefined) return undefined;
  if (schema.enum) return schema.enum.every((value) => typeof value === 'string') ? 'not-one-of-the-allowed-values' : undefined;
  switch (schema.type) {
    case 'string':
      return 12345;
    case 'integer':
    case 'number':
      return 'not a number';
    case 'boolean':
      return 'not a boolean';
    case 'array':
      return { not: 'an array' };
    case 'object':
      return ['not', 'an', 'object'];
    default:
      return undefined;
  }
}

/** Values that break the member's own bounds: too long, too short, out of range. */
function outOfBounds(schema: JsonSchema): Array<{ why: string; value: unknown }> {
  const out: Array<{ why: string; value: unknown }> = [];
  if (schema.type === 'string' && !schema.enum) {
    if (schema.maxLength !== undefined && schema.maxLength < 200_000)
      out.push({ why: `longer than maxLength ${schema.maxLength}`, value: 'x'.repeat(schema.maxLength + 1) });
    if ((schema.minLength ?? 0) > 0) out.push({ why: 'empty under minLength', value: '' });
  }
  if (schema.type === 'integer' || schema.type === 'number') {
    if (schema.maximum !== undefined) out.push({ why: `above maximum ${schema.maximum}`, value: schema.maximum + 1 });
    if (schema.minimum !== undefined) out.push({ why: `below minimum ${schema.minimum}`, value: schema.minimum - 1 });
    if (schema.type === 'integer') out.push({ why: 'not an integer', value: 1.5 });
  }
  if (schema.type === 'array' && schema.maxItems !== undefined && schema.maxItems < 10_000) {
    out.push({ why: `more than maxItems ${schema.maxItems}`, value: Array.from({ length: schema.maxItems + 1 }, () => null) });
  }
  return out;
}

/**
 * Variants of a valid object that the schema certainly refuses: a required member missing, a
 * member of the wrong type or out of bounds, an unknown member where none is allowed, or a
 * value that is not an object at all.
 */
export function invalidVariants(schema: JsonSchema | boolean | undefined, root: JsonSchema, valid: unknown): Array<{ why: string; value: unknown }> {
  const resolved = resolve(schema, root);
  const variants: Array<{ why: string; value: unknown }> = [];
  if (resolved.type !== 'object' && !resolved.properties) return variants;
  variants.push({ why: 'an array instead of an object', value: [valid] });
  const base = (valid && typeof valid === 'object' && !Array.isArray(valid) ? valid : {}) as Record<string, unknown>;
  for (const name of resolved.required ?? []) {
    const { [name]: _dropped, ...rest } = base;
    variants.push({ why: `required ${name} missing`, value: rest });
  }
  for (const [name, member] of Object.entries(resolved.properties ?? {})) {
    const memberSchema = resolve(member, root);
    const wrong = wrongTypeFor(memberSchema);
    if (wrong !== undefined) variants.push({ why: `${name} of the wrong type`, value: { ...base, [name]: wrong } });
    for (const bound of outOfBounds(memberSchema)) variants.push({ why: `${name} ${bound.why}`, value: { ...base, [name]: bound.value } });
  }
  if (resolved.additionalProperties === false) variants.push({ why: 'an unknown member', value: { ...base, fuzz_unknown_member: 1 } });
  return variants;
}

const NOT_VALID = 'zz-not-valid';

/**
 * Query strings carry text only: a member is certainly invalid as text when it must be a number,
 * one of an enum, match a pattern or fit a length.
 */
export function invalidQueryVariants(
  schema: JsonSchema | boolean | undefined,
  root: JsonSchema,
  valid: Record<string, unknown>,
): Array<{ why: string; value: Record<string, unknown> }> {
  const resolved = resolve(schema, root);
  const variants: Array<{ why: string; value: Record<string, unknown> }> = [];
  for (const [name, member] of Object.entries(resolved.properties ?? {})) {
    const memberSchema = resolve(member, root);
    const options = (memberSchema.anyOf ?? memberSchema.oneOf ?? [memberSchema]).map((option) => resolve(option, root));
    // Invalid only if no alternative could read the text: every one an integer/number, an enum or a bounded pattern.
    const refusesWord = options.every((option) => {
      if (option.type === 'integer' || option.type === 'number') return true;
      if (option.enum !== undefined) return !option.enum.includes(NOT_VALID);
      if (option.const !== undefined) return option.const !== NOT_VALID;
      return option.pattern !== undefined && !new RegExp(option.pattern).test(NOT_VALID);
    });
    if (refusesWord && options.length > 0) variants.push({ why: `${name} not readable as its type`, value: { ...valid, [name]: NOT_VALID } });
    const maxLength = options.every((option) => option.type === 'string' && option.maxLength !== undefined)
      ? Math.max(...options.map((option) => option.maxLength!))
      : undefined;
    if (maxLength !== undefined && maxLength < 10_000)
      variants.push({ why: `${name} longer than ${maxLength}`, value: { ...valid, [name]: 'x'.repeat(maxLength + 1) } });
  }
  return variants;
}
