import type { z } from 'zod';
import type { ValidationIssue } from '@svc/schemas';
import { ServiceError } from './service-error.ts';

export type InputLocation = 'path' | 'query' | 'header' | 'body';

/** Parses one part of the request; collects issues with their location instead of throwing. */
export function parsePart(schema: z.ZodType | undefined, value: unknown, location: InputLocation, issues: ValidationIssue[]): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues.flatMap((issue) => unwrapUnion(issue))) {
    issues.push({ loc: [location, ...issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key))], msg: issue.message, type: issue.code });
  }
  return undefined;
}

/**
 * A union (`string | string[]`) that refuses its input reports only "Invalid input". When the
 * input's type matched exactly one branch, that branch's own issues say what is wrong ("at most
 * 256 texts"), so they are reported instead, at their full path.
 */
function unwrapUnion(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  if (issue.code !== 'invalid_union' || !('errors' in issue) || !Array.isArray(issue.errors)) return [issue];
  const typeMatched = issue.errors.filter((branch) => !branch.every((inner) => inner.code === 'invalid_type' && inner.path.length === 0));
  if (typeMatched.length !== 1) return [issue];
  return typeMatched[0]!.flatMap((inner) => unwrapUnion({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue));
}

export function validationError(issues: ValidationIssue[]): ServiceError {
  const first = issues[0]!;
  const where = first.loc.join('.');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new ServiceError('validation_failed', `Invalid request: ${where}: ${first.msg}${more}`, { detail: issues });
}
