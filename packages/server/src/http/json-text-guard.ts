import { bodyRules, type ValidationIssue } from '@svc/schemas';
import { ServiceError } from './service-error.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * An escape that may decode to NUL or a surrogate half. Raw NUL is not valid JSON inside a
 * string and UTF-8 decoding never yields a lone surrogate, so only escapes bring either in; an
 * escaped backslash before `u0000` matches too, which only costs the walk that then finds nothing.
 */
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/** Index of the quote closing a string whose text starts at `from`, or -1 when it never closes. */
function endOfString(text: string, from: number): number {
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return -1;
    // A quote after an odd run of backslashes is escaped. Each run is counted once, by the
    // quote right after it, so the scan stays linear.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/**
 * One linear pass over the JSON text, before `JSON.parse`: refuses nesting past the cap (the
 * parser and every recursive walk after it would otherwise go as deep as the caller likes) and
 * says whether any string escape may hold NUL or a surrogate, so the parsed value is only walked
 * when it might hold one. Text that is not JSON is left for `JSON.parse` to refuse.
 */
export function scanJsonText(text: string): { mayHoldUnstorable: boolean } {
  const { maxJsonDepth } = bodyRules;
  let depth = 0;
  // A plain loop over the characters outside strings (about as fast as JSON.parse itself, and
  // never slower on dense brackets, where a regex search per bracket costs several times more);
  // strings are jumped over natively.
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = endOfString(text, index + 1);
      if (end === -1) break;
      index = end;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > maxJsonDepth) {
        throw new ServiceError('json_too_deep', `The JSON body nests arrays and objects more than ${maxJsonDepth} levels deep, the most taken.`, {
          detail: [{ loc: ['body'], msg: `nested more than ${maxJsonDepth} levels deep`, type: 'json_too_deep' }],
        });
      }
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth -= 1;
    }
  }
  // Most bodies hold no `\u` escape at all: one native search says so.
  return { mayHoldUnstorable: text.includes('\\u') && SUSPECT_ESCAPE.test(text) };
}

/** ES2024's `String.prototype.isWellFormed` (Node 20+), which the project's TypeScript lib predates. */
interface WellFormedText {
  isWellFormed(): boolean;
}

function unstorable(text: string): 'json_nul_character' | 'json_lone_surrogate' | undefined {
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
function findUnstorable(value: unknown): { code: 'json_nul_character' | 'json_lone_surrogate'; loc: Array<string | number> } | undefined {
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

const WHAT: Record<'json_nul_character' | 'json_lone_surrogate', string> = {
  json_nul_character: 'holds a NUL character (\\u0000)',
  json_lone_surrogate: 'holds a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape)',
};

/** Refuses a parsed body holding a string PostgreSQL text cannot store; call only when the scan said it may. */
export function refuseUnstorableStrings(value: unknown): void {
  const found = findUnstorable(value);
  if (!found) return;
  const where = found.loc.join('.');
  const issue: ValidationIssue = { loc: found.loc, msg: `the string ${WHAT[found.code]}, which is never accepted`, type: found.code };
  throw new ServiceError(found.code, `Invalid request: ${where}: ${issue.msg}.`, { detail: [issue] });
}
