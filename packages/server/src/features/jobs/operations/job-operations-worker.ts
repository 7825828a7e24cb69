import type { MessagePort } from 'node:worker_threads';
import type { CalculateResult, ValidateJsonResult } from '@svc/schemas';
import { isServiceError } from '../../../service-error.ts';
import { calculate, loadCalculator } from './calculate.ts';
import { validateJson } from './validate-json.ts';

/**
 * Told 'start' once the thread has started and loaded what the operation needs, right before the
 * item itself runs: the item's deadline counts from there, not from a thread's cold start.
 */
export interface StartSignal {
  started?: MessagePort;
}

export interface ValidateJsonTask extends StartSignal {
  operation: 'validate_json';
  schema: Record<string, unknown> | boolean;
  document: unknown;
}

export interface CalculateTask extends StartSignal {
  operation: 'calculate';
  expression: string;
}

/** Loads mathjs in a thread ahead of the first calculate item, so that item does not pay for it. */
export interface WarmCalculatorTask {
  operation: 'warm_calculator';
}

export type JobOperationTask = ValidateJsonTask | CalculateTask | WarmCalculatorTask;

/** A ServiceError does not survive the trip between threads as itself, so its code and message travel as data. */
export type JobOperationOutcome<Result> = { result: Result } | { error: { code: string; message: string } };

export default async function jobOperationTask(task: JobOperationTask): Promise<JobOperationOutcome<ValidateJsonResult | CalculateResult | null>> {
  try {
    switch (task.operation) {
      case 'validate_json':
        // ajv and re2-wasm loaded with this module, before the thread took its first task.
        task.started?.postMessage('start');
        return { result: validateJson(task.schema, task.document) };
      case 'calculate':
        await loadCalculator();
        task.started?.postMessage('start');
        return { result: await calculate(task.expression) };
      case 'warm_calculator':
        await loadCalculator();
        return { result: null };
    }
  } catch (error) {
    if (isServiceError(error)) return { error: { code: error.code, message: error.message } };
    // re2-wasm aborts for good when its fixed heap runs out: this thread's copy is dead, so the
    // thread goes and the pool starts a fresh one for the next task.
    if (error instanceof WebAssembly.RuntimeError) setImmediate(() => process.exit(1));
    throw error;
  }
}
