import type { ValidationIssue } from '@svc/schemas';
import { unstorableRefusal } from './unstorable-strings.ts';

/** A large JSON body's bytes, moved (not copied) to this thread, and what the scan of its chunks found. */
export interface JsonBodyTask {
  bytes: ArrayBuffer;
  mayHoldUnstorable: boolean;
}

/** The parsed value, or the refusal the main thread throws as a ServiceError (errors do not cross threads whole). */
export type JsonBodyOutcome =
  | { value: unknown }
  | { refusal: { code: 'malformed_json' | 'json_nul_character' | 'json_lone_surrogate'; message: string; detail?: ValidationIssue[] } };

/**
 * Decodes and parses a large JSON body in a worker thread (json-body-pool.ts): a 16 MiB body's
 * decoding and parse each allocate 16 MiB afresh, about 50 ms apiece on the event loop of a
 * 2-core VM. The checks are the main thread's own for a small body, in the same order.
 */
export default function parseJsonBody(task: JsonBodyTask): JsonBodyOutcome {
  const text = Buffer.from(task.bytes).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { refusal: { code: 'malformed_json', message: `The body is not valid JSON: ${(error as Error).message}` } };
  }
  const refusal = task.mayHoldUnstorable ? unstorableRefusal(value) : undefined;
  return refusal ? { refusal } : { value };
}
