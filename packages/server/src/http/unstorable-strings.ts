import type { ValidationIssue } from '@svc/schemas';

/**
 * The strings of a parsed JSON body PostgreSQL text cannot store (NUL, a lone surrogate). Kept
 * apart from json-text-guard.ts, with no module imported at run time, so the thread that parses
 * large bodies (json-body-worker.ts) loads only this.
 */

/** ES2024's `String.prototype.isWellFormed` (Node 20+), which the project's TypeScript lib predates. */
interface WellFormedText {
  isWellFormed(): boolean;
}

type UnstorableCode = 'json_nul_character' | 'json_lone_surrogate';

function unstorable(text: string): UnstorableCode | undefined {
  if (text.includes('\0')) return 'json_nul_character';
  if (!(text as string & WellFormedText).isWellFormed()) return 'json_lone_surrogate';
  return undefined;
}

/** A place in the parsed body; the path is only spelled out for the string refused. */
interface Place {
  readonly value: unknown;
  readonly key: string | number | undefined;
  readonly parent: Place | undefined;
}

function pathOf(place: Place, last?: string): Array<string | number> {
  const loc: Array<string | number> = last === undefined ? [] : [last];
  for (let at: Place | undefined = place; at?.key !== undefined; at = at.parent) loc.push(at.key);
  return ['body', ...loc.reverse()];
}

/**
 * The first string of a parsed body (key or value) that PostgreSQL cannot store, with its path.
 * Iterative, so its cost is linear in the value whatever its depth.
 */
function findUnstorable(value: unknown): { code: UnstorableCode; loc: Array<string | number> } | undefined {
  const stack: Place[] = [{ value, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const place = stack.pop()!;
    const current = place.value;
    if (typeof current === 'string') {
      const code = unstorable(current);
      if (code) return { code, loc: pathOf(place) };
    } else if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) stack.push({ value: current[index], key: index, parent: place });
    } else if (current !== null && typeof current === 'object') {
      const entries = Object.entries(current);
      for (let index = entries.length - 1; index >= 0; index--) {
        const [key, inner] = entries[index]!;
        const code = unstorable(key);
        if (code) return { code, loc: pathOf(place, key) };
        stack.push({ value: inner, key, parent: place });
      }
    }
  }
  return undefined;
}

const WHAT: Record<UnstorableCode, string> = {
  json_nul_character: 'holds a NUL character (\\u0000)',
  json_lone_surrogate: 'holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape)',
};

/** The refusal of a parsed body holding a string PostgreSQL text cannot store, as plain data (it may cross threads); undefined when it holds none. */
export function unstorableRefusal(value: unknown): { code: UnstorableCode; message: string; detail: ValidationIssue[] } | undefined {
  const found = findUnstorable(value);
  if (!found) return undefined;
  const where = found.loc.join('.');
  const issue: ValidationIssue = { loc: found.loc, msg: `the string ${WHAT[found.code]}, which is never accepted`, type: found.code };
  return { code: found.code, message: `Invalid request: ${where}: ${issue.msg}.`, detail: [issue] };
}
