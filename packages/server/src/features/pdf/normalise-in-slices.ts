import { runInSlices, type Steps } from './work-in-slices.ts';
import { normaliseText, normaliseTextUntrimmed } from './worker/normalise-text.ts';

/** Characters normalised per step: a few milliseconds of the slowest text measured (paragraph breaks). */
const CHUNK_CHARS = 65_536;

/**
 * True for a character no rule of normaliseText deletes, rewrites or joins across: not white
 * space (runs are squeezed), not a hyphen (a line-end hyphen joins words), not a soft hyphen or
 * zero-width character (deleted, which would join its neighbours), not half of a surrogate pair.
 */
function inert(code: number): boolean {
  if (code <= 0x20 || code === 0x2d || (code >= 0xd800 && code <= 0xdfff)) return false;
  return !/[\s\u2010\u2011\u00AD\u200B-\u200D\u2060\uFEFF]/.test(String.fromCharCode(code));
}

/** What may follow a cut: anything but a hyphen or a deleted character, which could join the word before it to what follows. */
function mayFollowCut(code: number): boolean {
  return !/[-\u2010\u2011\u00AD\u200B-\u200D\u2060\uFEFF\u0000]/.test(String.fromCharCode(code));
}

/**
 * normaliseText over a section of up to 16 MiB (about half a second at once), a chunk per step.
 * A chunk ends after an inert character and before one that cannot join it to what follows, so
 * no rule matches across the cut, and the chunks' results joined, then trimmed, are the whole
 * text's result. It stops once it has more than `enough` characters: the caller keeps at most that.
 */
export function normaliseTextInSlices(text: string, enough: number, signal?: AbortSignal): Promise<string> {
  if (text.length <= CHUNK_CHARS) return Promise.resolve(normaliseText(text));
  return runInSlices(normaliseSteps(text, enough), signal);
}

function* normaliseSteps(text: string, enough: number): Steps<string> {
  let normalised = '';
  // Where the text past the leading white space starts and where it ends (the final trim's bounds).
  let contentStart: number | undefined;
  let contentEnd = 0;
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + CHUNK_CHARS);
    // A text with no place to cut ahead (16 MiB of spaces) is one chunk: still one linear pass.
    while (end < text.length && !(inert(text.charCodeAt(end - 1)) && mayFollowCut(text.charCodeAt(end)))) end += 1;
    const chunk = normaliseTextUntrimmed(text.slice(start, end));
    const chunkContentEnd = chunk.trimEnd().length;
    if (chunkContentEnd > 0) {
      contentStart ??= normalised.length + chunk.length - chunk.trimStart().length;
      contentEnd = normalised.length + chunkContentEnd;
    }
    normalised += chunk;
    start = end;
    if (contentStart !== undefined && contentEnd - contentStart > enough) break;
    yield;
  }
  return normalised.trim();
}
