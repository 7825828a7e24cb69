import { runInSlices, type Steps } from '../../bounded/work-in-slices.ts';
import { normaliseText, normaliseTextUntrimmed } from './worker/normalise-text.ts';

/** Characters normalised per step: a few milliseconds of the slowest text measured (paragraph breaks). */
const CHUNK_CHARS = 65_536;

/**
 * True for a character no rule of normaliseText deletes, rewrites or joins across: not white
 * space (runs are squeezed), not a hyphen (a line-end hyphen joins words), not a soft hyphen or
 * zero-width character (deleted, which would join its neighbours), not half of a surrogate pair.
 * Numeric tests, since the scan for a cut may pass over megabytes.
 */
function inert(code: number): boolean {
  if (
    code <= 0x20 ||
    code === 0x2d ||
    code === 0x85 ||
    code === 0xa0 ||
    code === 0xad ||
    code === 0x1680 ||
    code === 0x2060 ||
    code === 0x3000 ||
    code === 0xfeff
  )
    return false;
  if (code >= 0x2000 && code <= 0x200d) return false; // spaces, zero-width characters
  if (code === 0x2010 || code === 0x2011 || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f) return false;
  return code < 0xd800 || code > 0xdfff;
}

/** What may follow a cut: anything but a hyphen or a deleted character, which could join the word before it to what follows. */
function mayFollowCut(code: number): boolean {
  return !(
    code === 0x2d ||
    code === 0x2010 ||
    code === 0x2011 ||
    code === 0xad ||
    (code >= 0x200b && code <= 0x200d) ||
    code === 0x2060 ||
    code === 0xfeff ||
    code === 0
  );
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

/** A run of the white space normaliseText turns into spaces, and of line feeds. */
const WHITE_RUN = /[ \t\f\v\u00A0\u2000-\u200A\u202F\u205F\u3000\n]+/g;

/**
 * normaliseText treats every run of such white space alike when it holds no line feed (it
 * becomes one space, or nothing next to a line break), and alike by min(line feeds, 2) when it
 * does: so a run is written as ' ', '\n' or '\n\n' first. That is what lets a stretch that is
 * all white space (nowhere to cut) shrink to nothing before it is normalised. Done a chunk at a time,
 * a run cut in two still keeps its kind: two parts of one kind are that kind, and their line
 * feeds add up to 2 exactly when the run's did.
 */
function* compactWhiteRuns(text: string): Steps<string> {
  let compact = '';
  for (let start = 0; start < text.length; start += CHUNK_CHARS) {
    compact += text.slice(start, start + CHUNK_CHARS).replace(WHITE_RUN, (run) => {
      let lineFeeds = 0;
      for (let index = 0; index < run.length && lineFeeds < 2; index++) if (run.charCodeAt(index) === 0x0a) lineFeeds++;
      return lineFeeds === 0 ? ' ' : '\n'.repeat(lineFeeds);
    });
    yield;
  }
  return compact;
}

function* normaliseSteps(text: string, enough: number): Steps<string> {
  let normalised = '';
  // Where the text past the leading white space starts and where it ends (the final trim's bounds).
  let contentStart: number | undefined;
  let contentEnd = 0;
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + CHUNK_CHARS);
    while (end < text.length && !(inert(text.charCodeAt(end - 1)) && mayFollowCut(text.charCodeAt(end)))) {
      end += 1;
      if ((end - start) % CHUNK_CHARS === 0) yield;
    }
    // A stretch with no place to cut (16 MiB of white space) has its runs written short first.
    const window = end - start > CHUNK_CHARS ? yield* compactWhiteRuns(text.slice(start, end)) : text.slice(start, end);
    const chunk = normaliseTextUntrimmed(window);
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
