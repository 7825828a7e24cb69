import { bodyRules } from '@svc/schemas';
import { ServiceError } from '../service-error.ts';
import { unstorableRefusal } from './unstorable-strings.ts';

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

function tooDeep(maxJsonDepth: number): ServiceError {
  return new ServiceError('json_too_deep', `The JSON body nests arrays and objects more than ${maxJsonDepth} levels deep, the most taken.`, {
    detail: [{ loc: ['body'], msg: `nested more than ${maxJsonDepth} levels deep`, type: 'json_too_deep' }],
  });
}

/**
 * One linear pass over a JSON body, before `JSON.parse`, done on its bytes chunk by chunk as they
 * arrive: it refuses nesting past the cap (the parser and every recursive walk after it would
 * otherwise go as deep as the caller likes) and says whether any string escape may hold NUL or a
 * surrogate, so the parsed value is only walked when it might hold one. Quotes, backslashes and
 * brackets are ASCII bytes, never part of a multi-byte UTF-8 sequence, so the bytes answer as the
 * text would. Scanning the whole text once it had arrived took 17-28 ms on a 21 MiB body, in the
 * same task as its parse. Text that is not JSON is left for `JSON.parse` to refuse.
 */
export class JsonBodyScan {
  private readonly maxJsonDepth = bodyRules.maxJsonDepth;
  private depth = 0;
  private tooDeep = false;
  private inString = false;
  /** Inside a string, the backslashes right before where the next chunk starts. */
  private backslashesBefore = 0;
  /** The body's last bytes before the previous chunk, where a suspect escape may start. */
  private carry = '';
  /** The chunk before this one: its last bytes join the carry only if another chunk comes (most bodies are one). */
  private previous: Buffer | undefined;
  private suspect = false;

  readonly write = (chunk: Buffer): void => {
    if (this.tooDeep || chunk.length === 0) return;
    const carry =
      this.previous === undefined ? this.carry : (this.carry + this.previous.subarray(-(SUSPECT_LENGTH - 1)).toString('latin1')).slice(-(SUSPECT_LENGTH - 1));
    this.carry = carry;
    this.previous = chunk;
    // Most bodies hold no `\u` escape at all: one native search per chunk says so. A chunk that
    // does is searched for a suspect one, with the last bytes of the chunks before it (an escape
    // cut in two), as Latin-1: the pattern is ASCII, and no byte of a multi-byte character is.
    if (!this.suspect && (carry.includes('\\') || chunk.includes(BACKSLASH_U))) this.suspect = SUSPECT_ESCAPE.test(carry + chunk.toString('latin1'));
    const length = chunk.length;
    let index = 0;
    while (index < length) {
      if (this.inString) {
        // Only quotes are searched for (natively); a quote after an odd run of backslashes is
        // escaped. Each run is counted once, by the quote right after it or at the chunk's end,
        // so the scan stays linear, and text dense with escapes costs no step per escape.
        const quote = chunk.indexOf(QUOTE, index);
        const end = quote === -1 ? length : quote;
        let backslashes = 0;
        while (end - 1 - backslashes >= index && chunk[end - 1 - backslashes] === BACKSLASH) backslashes += 1;
        if (end - backslashes === index) backslashes += this.backslashesBefore;
        if (quote === -1) {
          this.backslashesBefore = backslashes;
          return;
        }
        this.backslashesBefore = 0;
        if (backslashes % 2 === 0) this.inString = false;
        index = quote + 1;
        continue;
      }
      // A plain loop outside strings: never slower on dense brackets than a search per bracket.
      for (; index < length; index++) {
        const code = chunk[index];
        if (code === QUOTE) {
          this.inString = true;
          index += 1;
          break;
        }
        if (code === OPEN_BRACKET || code === OPEN_BRACE) {
          if (++this.depth > this.maxJsonDepth) {
            this.tooDeep = true;
            return;
          }
        } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
          this.depth -= 1;
        }
      }
    }
  };

  /**
   * Once the whole body is in: refuses nesting past the cap; says whether the body may hold NUL
   * or a lone surrogate, without reading its text again (a 16 MiB search, 14 ms, in the parse's turn).
   */
  finish(): { mayHoldUnstorable: boolean } {
    if (this.tooDeep) throw tooDeep(this.maxJsonDepth);
    return { mayHoldUnstorable: this.suspect };
  }
}

const BACKSLASH_U = Buffer.from('\\u');
/** Characters of the longest escape SUSPECT_ESCAPE matches (`\uD800`). */
const SUSPECT_LENGTH = 6;

/** Refuses a parsed body holding a string PostgreSQL text cannot store; call only when the scan said it may. */
export function refuseUnstorableStrings(value: unknown): void {
  const refusal = unstorableRefusal(value);
  if (refusal) throw new ServiceError(refusal.code, refusal.message, { detail: refusal.detail });
}
