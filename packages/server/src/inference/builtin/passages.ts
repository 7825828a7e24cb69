import { runToEnd, type Steps } from '../../bounded/work-in-slices.ts';
import { splitSentencesSteps, type TextSpan } from './text-units.ts';

/** A passage holds whole sentences up to about this many characters (one sentence may be longer). */
export const PASSAGE_TARGET_CHARS = 600;

export interface Passage extends TextSpan {
  documentIndex: number;
  sentences: TextSpan[];
}

/**
 * A document cut into passages of consecutive whole sentences, each at most about
 * PASSAGE_TARGET_CHARS long, with UTF-16 offsets into the document (end exclusive). A blank line
 * (a paragraph break) always starts a new passage, so a passage stays on one topic.
 */
export function splitPassages(text: string, documentIndex: number): Passage[] {
  return runToEnd(splitPassagesSteps(text, documentIndex));
}

export function* splitPassagesSteps(text: string, documentIndex: number): Steps<Passage[]> {
  const passages: Passage[] = [];
  let current: TextSpan[] = [];
  const flush = () => {
    if (current.length === 0) return;
    const start = current[0]!.start;
    const end = current.at(-1)!.end;
    passages.push({ documentIndex, start, end, text: text.slice(start, end), sentences: current });
    current = [];
  };
  let sentences = 0;
  for (const sentence of yield* splitSentencesSteps(text)) {
    if (++sentences % 1024 === 0) yield;
    const previous = current.at(-1);
    const paragraphBreak = previous !== undefined && /\n\s*\n/.test(text.slice(previous.end, sentence.start));
    if (paragraphBreak || (current.length > 0 && sentence.end - current[0]!.start > PASSAGE_TARGET_CHARS)) flush();
    current.push(sentence);
  }
  flush();
  return passages;
}
