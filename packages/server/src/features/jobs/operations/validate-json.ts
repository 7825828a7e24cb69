import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { RE2 } from 're2-wasm';
import type { ValidateJsonResult } from '@svc/schemas';
import { ServiceError } from '../../../service-error.ts';

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
type AddFormats = (ajv: Ajv, options: { mode: 'fast' }) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

const DRAFT_07 = /json-schema\.org\/draft-0[67]\/schema/;

/**
 * ajv-formats' `url` pattern (the same in both modes) backtracks quadratically on a long string
 * with no `@` (`http://::…`: 0.75 s at 20,000 characters); no URL this format is for is longer.
 */
const URL_FORMAT_MAX_CHARS = 2048;

/**
 * Caller patterns (`pattern`, `patternProperties`, `propertyNames`) compile with RE2, whose
 * matching is linear in the text: `^(a+)+$` cannot backtrack. re2-wasm works in Unicode mode only
 * (ajv passes `u`, and it is forced here) and has no lookaround or backreferences: such a pattern
 * fails to compile, which makes the schema `json_schema_invalid`. Its WASM heap is fixed (16 MiB)
 * and never collected, so every instance a validation makes is freed when it ends.
 */
function re2Engine(made: RE2[]) {
  const engine = (pattern: string, flags: string) => {
    const compiled = new RE2(pattern, flags.includes('u') ? flags : `${flags}u`);
    made.push(compiled);
    return compiled;
  };
  // Only read by ajv's standalone code generation, which is not used.
  engine.code = 're2-wasm';
  return engine;
}

/**
 * A fresh validator per schema: a schema's `$id` never leaks into another caller's, and nothing
 * is fetched (no `loadSchema`, so a `$ref` outside the schema fails to compile). Draft 2020-12
 * by default; a schema that names draft-06 or -07 gets that draft. Formats are ajv-formats' fast
 * set, whose patterns are linear but for `url`, bounded above.
 */
function validatorFor(schema: Record<string, unknown> | boolean, made: RE2[]): Ajv {
  const options = { allErrors: true, strict: false, validateFormats: true, code: { regExp: re2Engine(made) } } as const;
  const declared = typeof schema === 'object' && typeof schema.$schema === 'string' ? schema.$schema : '';
  const ajv = DRAFT_07.test(declared) ? new Ajv(options) : (new Ajv2020(options) as unknown as Ajv);
  addFormats(ajv, { mode: 'fast' });
  const url = ajv.formats.url as RegExp;
  ajv.addFormat('url', { type: 'string', validate: (text: string) => text.length <= URL_FORMAT_MAX_CHARS && url.test(text) });
  return ajv;
}

const violation = (error: ErrorObject) => ({
  instance_path: error.instancePath,
  schema_path: error.schemaPath,
  keyword: error.keyword,
  message: error.message ?? error.keyword,
});

/**
 * Validates a document against a JSON Schema with ajv; a schema that does not compile (RE2
 * refusing a pattern included) is `json_schema_invalid`. Compiling a schema costs time in its
 * size, and some schemas cost exponential time to apply (nested `anyOf` through `$ref`), so this
 * runs in a worker under a deadline (job-operations-pool.ts), never on the event loop.
 */
export function validateJson(schema: Record<string, unknown> | boolean, document: unknown): ValidateJsonResult {
  const made: RE2[] = [];
  try {
    let validate: ReturnType<ReturnType<typeof validatorFor>['compile']>;
    try {
      validate = validatorFor(schema, made).compile(schema);
    } catch (error) {
      const message = (error as Error).message;
      const hint = /invalid perl operator|invalid escape sequence/.test(message) ? ' (patterns run on RE2: no lookaround, no backreferences)' : '';
      throw new ServiceError('json_schema_invalid', `The JSON Schema does not compile: ${message}${hint}`);
    }
    const valid = validate(document) as boolean;
    return { valid, errors: valid ? [] : (validate.errors ?? []).map(violation) };
  } finally {
    for (const compiled of made) (compiled as unknown as { wrapper: { delete(): void } }).wrapper.delete();
  }
}
