import type { ValidateJsonResult } from '@svc/schemas';
import { isServiceError } from '../../../http/service-error.ts';
import { validateJson } from './validate-json.ts';

export interface ValidateJsonTask {
  schema: Record<string, unknown> | boolean;
  document: unknown;
}

/** A ServiceError does not survive the trip between threads as itself, so its code and message travel as data. */
export type ValidateJsonOutcome = { result: ValidateJsonResult } | { error: { code: string; message: string } };

export default function validateJsonTask(task: ValidateJsonTask): ValidateJsonOutcome {
  try {
    return { result: validateJson(task.schema, task.document) };
  } catch (error) {
    if (isServiceError(error)) return { error: { code: error.code, message: error.message } };
    // re2-wasm aborts for good when its fixed heap runs out: this thread's copy is dead, so the
    // thread goes and the pool starts a fresh one for the next task.
    if (error instanceof WebAssembly.RuntimeError) setImmediate(() => process.exit(1));
    throw error;
  }
}
