import { SvcError, ValidationError } from '@svc/client';
import type { ValidationIssue } from '@svc/schemas';

/** `body.scopes` as a person names it: "Scopes"; an index (`topics.3`) says which one. */
const fieldName = (loc: ValidationIssue['loc']) => {
  const path = loc[0] === 'body' || loc[0] === 'query' || loc[0] === 'params' || loc[0] === 'headers' ? loc.slice(1) : loc;
  const named = path.filter((part) => typeof part === 'string').at(-1);
  const index = path.at(-1);
  const label = named ? named.replaceAll('_', ' ').replace(/^./, (first) => first.toUpperCase()) : 'The request';
  return typeof index === 'number' ? `${label} (number ${index + 1})` : label;
};

/** zod's wording for the common cases, in a form's words. Anything else keeps the server's message. */
const readable = (issue: ValidationIssue) => {
  const small = /^Too small: expected (?:array|set) to have >=(\d+) items?$/.exec(issue.msg);
  if (small) return small[1] === '1' ? 'choose at least one' : `choose at least ${small[1]}`;
  const big = /^Too big: expected (?:array|set) to have <=(\d+) items?$/.exec(issue.msg);
  if (big) return `at most ${big[1]}`;
  if (/^Too small: expected string to have >=1 characters?$/.test(issue.msg)) return 'required';
  return issue.msg.charAt(0).toLowerCase() + issue.msg.slice(1);
};

/**
 * An API failure as a person reads it: for a refused form, each field and what it needs; else
 * the server's message. Then its stable code and the request id to quote.
 */
export function ErrorNote({ error }: { error: unknown }) {
  const known = SvcError.isInstance(error) ? error : undefined;
  const issues = error instanceof ValidationError ? error.issues : [];
  return (
    <div class="error" role="alert">
      {issues.length > 0 ? (
        <>
          <p>Please check {issues.length === 1 ? 'this field' : 'these fields'}:</p>
          <ul>
            {issues.map((issue) => (
              <li key={`${issue.loc.join('.')}:${issue.msg}`}>
                {fieldName(issue.loc)}: {readable(issue)}
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p>{known ? known.message : error instanceof Error ? error.message : String(error)}</p>
      )}
      {known && (
        <p class="meta">
          {known.status} <code>{known.code}</code>
          {known.requestId && (
            <>
              {' '}
              · request <code>{known.requestId}</code>
            </>
          )}
        </p>
      )}
    </div>
  );
}
