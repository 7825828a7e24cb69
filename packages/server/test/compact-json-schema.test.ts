import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { compactJsonSchema } from '@svc/schemas';

/**
 * compactJsonSchema's rewrites keep the set of valid documents (issue 43's tools/list headroom):
 * what every branch of a oneOf of objects says alike is said once beside it, and keywords that
 * accept everything are dropped. mcp-tool-list-size.test.ts checks the same on every tool with
 * drawn arguments; these are the cases a drawn argument may miss.
 */
const ajv = new Ajv2020({ strict: false });
const agree = (t: import('ava').ExecutionContext, full: Record<string, unknown>, documents: unknown[]) => {
  const compact = compactJsonSchema(full);
  const [fullValid, compactValid] = [ajv.compile(full), ajv.compile(compact)];
  for (const document of documents) t.is(compactValid(document), fullValid(document), JSON.stringify(document));
  return compact;
};

const branch = (operation: string, item: Record<string, unknown>) => ({
  type: 'object',
  properties: { schema: { const: 'v1' }, operation: { const: operation }, items: { type: 'array', minItems: 1, maxItems: 2, items: item } },
  required: ['schema', 'operation', 'items'],
  additionalProperties: false,
});
const batch = {
  description: 'One operation and its items.',
  oneOf: [branch('a', { type: 'string', maxLength: 3 }), branch('b', { type: 'integer' }), branch('c', { type: 'boolean' })],
};
const documents = [
  { schema: 'v1', operation: 'a', items: ['abc'] },
  { schema: 'v1', operation: 'a', items: ['abcd'] },
  { schema: 'v1', operation: 'a', items: [1] },
  { schema: 'v1', operation: 'b', items: [1, 2] },
  { schema: 'v1', operation: 'b', items: [1, 2, 3] },
  { schema: 'v1', operation: 'c', items: [] },
  { schema: 'v1', operation: 'c', items: [true], extra: 1 },
  { schema: 'v2', operation: 'c', items: [true] },
  { operation: 'c', items: [true] },
  { schema: 'v1', operation: 'd', items: [true] },
  { schema: 'v1', operation: 'c', items: 'true' },
  'v1',
  null,
];

test('the branches of a oneOf of objects say once what they share, and accept the same documents', (t) => {
  const compact = agree(t, batch, documents) as {
    description?: string;
    additionalProperties?: unknown;
    required?: unknown;
    oneOf: Array<Record<string, unknown>>;
  };
  t.true(JSON.stringify(compact).length < JSON.stringify(batch).length);
  t.is(compact.description, batch.description, "the parent's own description stays");
  t.is(compact.additionalProperties, false);
  t.deepEqual(compact.required, ['schema', 'operation', 'items']);
  for (const rest of compact.oneOf) t.false('additionalProperties' in rest || 'required' in rest || 'type' in rest, JSON.stringify(rest));
});

test('branches whose properties differ in name, or hold a false schema, are left as they are', (t) => {
  const renamed = { oneOf: [branch('a', { type: 'string' }), { ...branch('b', { type: 'string' }), properties: { other: { type: 'string' } } }] };
  t.deepEqual(agree(t, renamed, [...documents, { other: 'x' }]), renamed);
  const refusing = {
    oneOf: [branch('a', { type: 'string' }), { ...branch('b', { type: 'string' }), properties: { ...branch('b', {}).properties, schema: false } }],
  };
  t.deepEqual(agree(t, refusing, documents), refusing);
});

test('keywords that accept everything are dropped', (t) => {
  const open = { type: 'object', properties: { receipt: { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} } } };
  const compact = agree(t, open, [{ receipt: { a: 1 } }, { receipt: 1 }, {}, 1]);
  t.deepEqual(compact, { type: 'object', properties: { receipt: { type: 'object' } } });
  // unevaluatedProperties sees what additionalProperties evaluated: there nothing is dropped.
  const unevaluated = { type: 'object', allOf: [{ additionalProperties: {} }], unevaluatedProperties: false };
  t.deepEqual(agree(t, unevaluated, [{ a: 1 }, {}]), unevaluated);
});
