import { stemmer } from 'stemmer';
import { runToEnd, type Steps } from '../../bounded/work-in-slices.ts';
import { STOPWORDS, tokenize } from '../hashed-embeddings.ts';

/**
 * Question and pronoun words: a question's "how many" or "I" names no topic, and left in, they
 * would count as unmatched query terms against every passage.
 */
const QUESTION_WORDS = new Set(
  'how what when where which who whom whose why many much i me my mine he she him her his they am been being do does did done have had would could should shall may might must there here into about any some'.split(
    ' ',
  ),
);

/**
 * Index terms for lexical ranking: lower-cased words (any script), English function and question
 * words dropped, Porter-stemmed (the `stemmer` package) so `refunds` meets `refund`.
 */
export function indexTerms(text: string): string[] {
  return runToEnd(indexTermsSteps(text));
}

/** Words stemmed between two yields of `indexTermsSteps`. */
const WORDS_PER_YIELD = 2048;

export function* indexTermsSteps(text: string): Steps<string[]> {
  const terms: string[] = [];
  for (const word of tokenize(text)) {
    if (STOPWORDS.has(word) || QUESTION_WORDS.has(word)) continue;
    terms.push(stemmer(word));
    if (terms.length % WORDS_PER_YIELD === 0) yield;
  }
  return terms;
}

/** Every word, stemmed, none dropped: for keyword lists where "how" or "what" is the signal. */
export function stemmedWords(text: string): string[] {
  return tokenize(text).map((word) => stemmer(word));
}

/** Word tokens as the built-in engine counts usage (its tokenizer, not an upstream's). */
export function countWordTokens(text: string): number {
  return tokenize(text).length;
}

/** Characters tokenized per step of `countWordTokensSteps`: a few milliseconds. */
const COUNT_CHUNK_CHARS = 32_768;

/**
 * `countWordTokens` a chunk per step, for texts of hundreds of kilobytes (400,000 characters took
 * 23 ms at once). A chunk ends between two ASCII characters, the first neither a letter nor a
 * digit: no word spans the cut, and NFKC and lower-casing change nothing across it, so the
 * chunks' counts add up to the whole text's.
 */
export function* countWordTokensSteps(text: string): Steps<number> {
  let tokens = 0;
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + COUNT_CHUNK_CHARS);
    while (end < text.length && !(text.charCodeAt(end) < 0x80 && isAsciiSeparator(text.charCodeAt(end - 1)))) end += 1;
    tokens += countWordTokens(text.slice(start, end));
    start = end;
    yield;
  }
  return tokens;
}

const isAsciiSeparator = (code: number) => code < 0x80 && !((code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a));

/** A span of a text: UTF-16 offsets, end exclusive, and the text between them. */
export interface TextSpan {
  start: number;
  end: number;
  text: string;
}

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * The sentences of a text with their offsets, trimmed of surrounding white space. Uses the
 * runtime's Unicode sentence segmentation (UAX #29, `Intl.Segmenter`); a blank line also ends a
 * sentence, since headings and list items seldom end with a full stop.
 */
export function splitSentences(text: string, offset = 0): TextSpan[] {
  return runToEnd(splitSentencesSteps(text, offset));
}

/** Sentences between two yields of `splitSentencesSteps`. */
const SEGMENTS_PER_YIELD = 256;

/** `splitSentences`, yielding every few hundred sentences so a caller can run it in slices. */
export function* splitSentencesSteps(text: string, offset = 0): Steps<TextSpan[]> {
  const spans: TextSpan[] = [];
  let segments = 0;
  for (const { segment, index } of sentenceSegmenter.segment(text)) {
    if (++segments % SEGMENTS_PER_YIELD === 0) yield;
    let cursor = index;
    for (const piece of segment.split(/(\n\s*\n)/)) {
      if (!/^\n\s*\n$/.test(piece)) pushTrimmed(spans, piece, cursor + offset);
      cursor += piece.length;
    }
  }
  return spans;
}

function pushTrimmed(spans: TextSpan[], piece: string, start: number): void {
  const leading = piece.length - piece.trimStart().length;
  const trimmed = piece.trim();
  if (!/[\p{L}\p{N}]/u.test(trimmed)) return;
  spans.push({ start: start + leading, end: start + leading + trimmed.length, text: trimmed });
}
