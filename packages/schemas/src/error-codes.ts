import { featureErrorCodes } from './contract.ts';
import { platformErrorCodes } from './errors.ts';
import { mergeUnique } from './feature-contract.ts';

/**
 * Stable error codes and their HTTP status: the platform's (`errors.ts`) and every feature's
 * (`<feature>/errors.ts`), one table for the server, the client and the docs. A code may carry a
 * suffix after a colon (`blackboard_field_conflict:task`); the status comes from the part before
 * it. A feature's code declared by the platform too throws here, as two features' codes do.
 */
export const errorCodes = mergeUnique('the error code', [
  { name: 'the platform', table: platformErrorCodes },
  { name: 'a feature', table: featureErrorCodes },
]) as unknown as typeof platformErrorCodes & typeof featureErrorCodes;

export type ErrorCode = keyof typeof errorCodes;

export function statusForCode(code: string): number {
  const base = code.split(':', 1)[0] as ErrorCode;
  return errorCodes[base] ?? 500;
}
