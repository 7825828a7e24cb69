import type { z } from 'zod';
import type { ValidationIssue } from '@svc/schemas';
import { ServiceError } from '../service-error.ts';

export type InputLocation = 'path' | 'query' | 'header' | 'body';

/** Parses one part of the request; collects issues with their location instead of throwing. */
export function parsePart(schema: z.ZodType | undefined, value: unknown, location: InputLocation, issues: ValidationIssue[]): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues.flatMap(unwrapUnion)) {
    issues.push({ loc: [location, ...issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key))], msg: issue.message, type: issue.code });
  }
  return undefined;
}

type Issue = z.core.$ZodIssue;

/**
 * A union none of whose options matched says only "Invalid input". When exactly one option had
 * the right type (a list where a string or a list is allowed) its own issues say what is wrong
 * ("at most 2048 inputs"), so those are reported, under the union's path.
 */
function unwrapUnion(issue: Issue): Issue[] {
  if (issue.code !== 'invalid_union' || !('errors' in issue) || issue.errors.length === 0) return [issue];
  const typed = issue.errors.filter((branch) => !branch.every((inner) => inner.code === 'invalid_type' && inner.path.length === 0));
  if (typed.length !== 1) return [issue];
  return typed[0]!.flatMap((inner) => unwrapUnion({ ...inner, path: [...issue.path, ...inner.path] } as Issue));
}

export function validationError(issues: ValidationIssue[]): ServiceError {
  const first = issues[0]!;
  const where = first.loc.join('.');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new ServiceError('validation_failed', `Invalid request: ${where}: ${first.msg}${more}`, { detail: issues });
}
