import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateJsonResult } from '@svc/schemas';
import { ServiceError } from '../../../http/service-error.ts';

// ajv-formats is CommonJS: its default export arrives wrapped under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

const DRAFT_07 = /json-schema\.org\/draft-0[67]\/schema/;

/**
 * A fresh validator per schema: a schema's `$id` never leaks into another caller's, and nothing
 * is fetched (no `loadSchema`, so a `$ref` outside the schema fails to compile). Draft 2020-12
 * by default; a schema that names draft-06 or -07 gets that draft.
 */
function validatorFor(schema: Record<string, unknown> | boolean): Ajv {
  const options = { allErrors: true, strict: false, validateFormats: true } as const;
  const declared = typeof schema === 'object' && typeof schema.$schema === 'string' ? schema.$schema : '';
  const ajv = DRAFT_07.test(declared) ? new Ajv(options) : (new Ajv2020(options) as unknown as Ajv);
  addFormats(ajv);
  return ajv;
}

const violation = (error: ErrorObject) => ({ instance_path: error.instancePath, schema_path: error.schemaPath, keyword: error.keyword, message: error.message ?? error.keyword });

/** Validates a document against a JSON Schema with ajv; a schema that does not compile is `json_schema_invalid`. */
export function validateJson(schema: Record<string, unknown> | boolean, document: unknown): ValidateJsonResult {
  let validate;
  try {
    validate = validatorFor(schema).compile(schema);
  } catch (error) {
    throw new ServiceError('json_schema_invalid', `The JSON Schema does not compile: ${(error as Error).message}`);
  }
  const valid = validate(document) as boolean;
  return { valid, errors: valid ? [] : (validate.errors ?? []).map(violation) };
}
