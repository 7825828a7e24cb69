import type { z } from 'zod';
import type { ValidationIssue } from '@svc/schemas';
import { ServiceError } from './service-error.ts';

export type InputLocation = 'path' | 'query' | 'header' | 'body';

/** Parses one part of the request; collects issues with their location instead of throwing. */
export function parsePart(schema: z.ZodType | undefined, value: unknown, location: InputLocation, issues: ValidationIssue[]): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    issues.push({ loc: [location, ...issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key))], msg: issue.message, type: issue.code });
  }
  return undefined;
}

export function validationError(issues: ValidationIssue[]): ServiceError {
  const first = issues[0]!;
  const where = first.loc.join('.');
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new ServiceError('validation_failed', `Invalid request: ${where}: ${first.msg}${more}`, { detail: issues });
}
