import type { RawSection, SectionedDocument } from './document-sections.ts';
import { runInSlices, runToEnd, type Steps } from '../../bounded/work-in-slices.ts';

/*
 * Markdown into sections at ATX (`## x`) and setext (`x\n===`) headings, outside code fences.
 *
 * Caller documents reach 16 MiB, so every step is a forward scan, written as a generator that
 * yields every few thousand steps (work-in-slices.ts). The regular expressions that used to do
 * this (an ATX heading pattern with three overlapping `\s` runs; image, link and strong patterns
 * that rescanned to the end of the text from every opener) held the event loop for seconds on a
 * few kilobytes. Section text is kept as offsets into the document until it is needed, so a
 * document of empty lines does not become millions of string pieces.
 */

const STEPS_PER_YIELD = 4096;
const LINE_END_CHUNK = 262_144;

export function sectionMarkdown(markdown: string): SectionedDocument {
  return runToEnd(markdownSections(markdown));
}

export function sectionMarkdownInSlices(markdown: string, signal?: AbortSignal): Promise<SectionedDocument> {
  return runInSlices(markdownSections(markdown), signal);
}

function* markdownSections(markdown: string): Steps<SectionedDocument> {
  const text = yield* unifyLineEnds(markdown);
  const sections: RawSection[] = [];
  let heading: string | null = null;
  let level = 0;
  let bodyStart = -1;
  let bodyEnd = -1;
  let fence: string | undefined;
  const body = () => (bodyStart === -1 ? '' : `${text.slice(bodyStart, bodyEnd)}\n`);
  const startSection = (nextHeading: string, nextLevel: number) => {
    const current = body();
    if (heading !== null || current.trim() !== '') sections.push({ heading, level, text: current });
    heading = nextHeading.trim();
    level = nextLevel;
    bodyStart = -1;
  };
  const lineEnd = (start: number) => {
    const end = text.indexOf('\n', start);
    return end === -1 ? text.length : end;
  };
  let steps = 0;
  for (let start = 0; start <= text.length; ) {
    if (++steps % STEPS_PER_YIELD === 0) yield;
    const end = lineEnd(start);
    const line = text.slice(start, end);
    const fenceMatch = /^\s{0,3}(```|~~~)/.exec(line);
    if (fence === undefined && !fenceMatch) {
      const atx = atxHeading(line);
      if (atx) {
        startSection(atx.text, atx.level);
        start = end + 1;
        continue;
      }
      const nextStart = end + 1;
      const next = nextStart <= text.length ? text.slice(nextStart, lineEnd(nextStart)) : undefined;
      if (next !== undefined && line.trim() !== '' && isSetextUnderline(next) && !/^\s{0,3}[-*+]\s/.test(line)) {
        startSection(line, next.trim().startsWith('=') ? 1 : 2);
        start = nextStart + next.length + 1;
        continue;
      }
    }
    if (fenceMatch) {
      if (fence === undefined) fence = fenceMatch[1];
      else if (fenceMatch[1] === fence) fence = undefined;
    }
    if (bodyStart === -1) bodyStart = start;
    bodyEnd = end;
    start = end + 1;
  }
  sections.push({ heading, level, text: body() });
  const kept: RawSection[] = [];
  for (const section of sections) {
    if (++steps % 64 === 0) yield;
    if (section.heading === null && section.text.trim() === '') continue;
    const heading = section.heading === null || !hasInlineMarks(section.heading) ? section.heading : yield* plainInline(section.heading);
    kept.push({ ...section, heading, text: hasInlineMarks(section.text) ? yield* plainInline(section.text) : section.text });
  }
  const title = kept.find((section) => section.level === 1)?.heading ?? undefined;
  return { sections: kept, ...(title ? { title } : {}) };
}

/** `\r\n` and lone `\r` become `\n` (what `replace(/\r\n?/g, '\n')` did), a chunk at a time. */
function* unifyLineEnds(text: string): Steps<string> {
  if (!text.includes('\r')) return text;
  const chunks: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + LINE_END_CHUNK, text.length);
    if (text[end - 1] === '\r' && text[end] === '\n') end += 1;
    // split and join, not replace(/\r\n?/g): a global replace with a match per line kept several
    // MiB per chunk alive in V8 (measured 277 MiB for 16 MiB of CRLF, against 23 MiB this way).
    chunks.push(text.slice(start, end).split('\r\n').join('\n').split('\r').join('\n'));
    start = end;
    yield;
  }
  return chunks.join('');
}

/**
 * `^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$` as a scan: up to three spaces of indent, one to six `#`,
 * at least one space, then the text without a closing run of `#` and the spaces around it.
 */
function atxHeading(line: string): { level: number; text: string } | undefined {
  const indent = line.length - line.trimStart().length;
  if (indent > 3) return undefined;
  let end = indent;
  while (end < line.length && end - indent <= 6 && line[end] === '#') end += 1;
  const level = end - indent;
  if (level === 0 || level > 6) return undefined;
  const rest = line.slice(end);
  if (rest === '' || rest.trimStart() === rest) return undefined;
  const body = rest.trimEnd();
  let close = body.length;
  while (close > 0 && body[close - 1] === '#') close -= 1;
  return { level, text: body.slice(0, close).trim() };
}

/** `^\s{0,3}(=+|-+)\s*$` without the backtracking of `=+` over a long run that ends otherwise. */
function isSetextUnderline(line: string): boolean {
  const trimmed = line.trim();
  return line.length - line.trimStart().length <= 3 && (/^=+$/.test(trimmed) || /^-+$/.test(trimmed));
}

const hasInlineMarks = (text: string) => /[[*_]/.test(text);

/** Inline syntax that only hides words: images and links keep their text, emphasis marks go. */
function* plainInline(text: string): Steps<string> {
  const withoutImages = text.includes('![') ? yield* unwrapBracketed(text, '![', true) : text;
  const withoutLinks = withoutImages.includes('[') ? yield* unwrapBracketed(withoutImages, '[', false) : withoutImages;
  return withoutLinks.includes('**') || withoutLinks.includes('__') ? yield* unwrapStrong(withoutLinks) : withoutLinks;
}

/**
 * `!\[([^\]]*)\]\([^)]*\)` (or the link form `\[([^\]]+)\]\([^)]*\)`) replaced by its text. The
 * next `]` and `)` are looked up once and reused while the openers move forward, so a run of
 * openers with no closer costs one pass instead of one pass per opener.
 */
function* unwrapBracketed(text: string, opener: '![' | '[', allowEmpty: boolean): Steps<string> {
  const nextClose = forwardIndexOf(text, ']');
  const nextParen = forwardIndexOf(text, ')');
  const out = new Pieces();
  let copied = 0;
  let steps = 0;
  for (let at = text.indexOf(opener); at !== -1; ) {
    if (++steps % STEPS_PER_YIELD === 0) yield;
    const labelStart = at + opener.length;
    const close = nextClose(labelStart);
    const paren = close !== -1 && text[close + 1] === '(' && (allowEmpty || close > labelStart) ? nextParen(close + 2) : -1;
    if (paren === -1) {
      at = text.indexOf(opener, at + 1);
      continue;
    }
    out.push(text.slice(copied, at));
    out.push(text.slice(labelStart, close));
    copied = paren + 1;
    at = text.indexOf(opener, copied);
  }
  return copied === 0 ? text : out.join(text.slice(copied));
}

/**
 * `(\*\*|__)(?=\S)(.+?)(?<=\S)\1` replaced by its inner text: the closer is the first same
 * delimiter after a non-space, on the same line. Openers, closers and line ends are all found
 * with forward-only cursors, so the cost stays linear however many openers fail.
 */
function* unwrapStrong(text: string): Steps<string> {
  const cursors = { '**': forwardIndexOf(text, '**'), __: forwardIndexOf(text, '__') };
  const closers = { '**': forwardCloser(text, '**'), __: forwardCloser(text, '__') };
  const lineEnd = forwardLineEnd(text);
  const out = new Pieces();
  let copied = 0;
  let steps = 0;
  for (let from = 0; ; ) {
    if (++steps % STEPS_PER_YIELD === 0) yield;
    const stars = cursors['**'](from);
    const underscores = cursors.__(from);
    if (stars === -1 && underscores === -1) break;
    const delimiter = underscores === -1 || (stars !== -1 && stars < underscores) ? '**' : '__';
    const at = delimiter === '**' ? stars : underscores;
    const first = text[at + 2];
    const close = first === undefined || isSpace(first) ? -1 : closers[delimiter](at + 3);
    if (close === -1 || close > lineEnd(at + 2)) {
      from = at + 1;
      continue;
    }
    out.push(text.slice(copied, at));
    out.push(text.slice(at + 2, close));
    copied = close + 2;
    from = copied;
  }
  return copied === 0 ? text : out.join(text.slice(copied));
}

/** indexOf(needle, from) for non-decreasing `from`: each character is read at most once overall. */
function forwardIndexOf(text: string, needle: string): (from: number) => number {
  let found = -2;
  return (from) => {
    if (found === -1 || found >= from) return found;
    found = text.indexOf(needle, from);
    return found;
  };
}

/** The first `delimiter` at or after `from` that follows a non-space (where a strong span may close). */
function forwardCloser(text: string, delimiter: string): (from: number) => number {
  const next = forwardIndexOf(text, delimiter);
  let found = -2;
  return (from) => {
    if (found === -1 || found >= from) return found;
    for (found = next(from); found !== -1 && isSpace(text[found - 1]!); found = next(found + 1));
    return found;
  };
}

/** The first line terminator (what `.` does not match) at or after `from`, for non-decreasing `from`. */
function forwardLineEnd(text: string): (from: number) => number {
  let found = -1;
  return (from) => {
    if (found >= from) return found;
    found = from;
    while (found < text.length && !isLineTerminator(text[found]!)) found += 1;
    return found;
  };
}

/** Output assembled from many slices, joined in batches so a million matches do not make a million-node string. */
class Pieces {
  private batch: string[] = [];
  private readonly joined: string[] = [];
  push(piece: string): void {
    this.batch.push(piece);
    if (this.batch.length >= STEPS_PER_YIELD) {
      this.joined.push(this.batch.join(''));
      this.batch = [];
    }
  }
  join(tail: string): string {
    return this.joined.join('') + this.batch.join('') + tail;
  }
}

const isSpace = (char: string) => char.trim() === '';
const isLineTerminator = (char: string) => char === '\n' || char === '\r' || char === '\u2028' || char === '\u2029';
