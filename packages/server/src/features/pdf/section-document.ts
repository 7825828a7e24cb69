import { pdfLimits, type DocumentExtraction, type DocumentSection } from '@svc/schemas';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sectionPlainText, type SectionedDocument } from './document-sections.ts';
import { sectionHtmlInSlices } from './html-sections.ts';
import { sectionMarkdownInSlices } from './markdown-sections.ts';
import { normaliseTextInSlices } from './normalise-in-slices.ts';

/** The formats sectioned from text: a DOCX is sectioned from the HTML it converts to. */
export type TextDocumentFormat = 'html' | 'markdown' | 'text';

/** An extraction's sections and what is said of them: the answer but its format and warnings. */
export type SectionedText = Omit<DocumentExtraction, 'format' | 'warnings'>;

/**
 * A text document into the answer's sections: parsed, each section and heading normalised, cut at
 * `maxChars` and the contract's section cap. Linear work in slices between turns of the event
 * loop; a large document runs it in a worker thread (document-sections-pool.ts), where the
 * garbage of 16 MiB of parsing costs other callers nothing.
 */
export async function sectionTextDocument(text: string, format: TextDocumentFormat, maxChars: number, signal?: AbortSignal): Promise<SectionedText> {
  const document: SectionedDocument =
    format === 'html' ? await sectionHtmlInSlices(text, signal) : format === 'markdown' ? await sectionMarkdownInSlices(text, signal) : sectionPlainText(text);
  const heading = async (raw: string | null) =>
    raw === null ? null : capHeading(document.headingsToNormalise ? await normaliseTextInSlices(raw, pdfLimits.maxHeadingChars, signal) : raw);
  const sections: DocumentSection[] = [];
  let chars = 0;
  // Short texts are normalised at once, so 10,000 of them take a turn of the event loop now and then.
  let sinceTurn = 0;
  let truncatedReason: 'max_chars' | 'max_sections' | null = null;
  for (const raw of document.sections) {
    if (chars >= maxChars) {
      truncatedReason = 'max_chars';
      break;
    }
    if (sections.length >= pdfLimits.maxDocumentSections) {
      truncatedReason = 'max_sections';
      break;
    }
    sinceTurn += raw.text.length + (raw.heading?.length ?? 0);
    if (sinceTurn > TURN_AFTER_CHARS) {
      sinceTurn = 0;
      await nextTurn();
      signal?.throwIfAborted();
    }
    let sectionText = await normaliseTextInSlices(raw.text, maxChars - chars, signal);
    if (chars + sectionText.length > maxChars) {
      sectionText = sectionText.slice(0, maxChars - chars);
      truncatedReason = 'max_chars';
    }
    chars += sectionText.length;
    sections.push({
      section_number: sections.length + 1,
      heading: await heading(raw.heading),
      level: raw.level,
      page_number: null,
      text: sectionText,
      char_count: sectionText.length,
    });
    if (truncatedReason) break;
  }
  const title = document.title === undefined ? undefined : (await heading(document.title)) || undefined;
  const sectionCount = document.sectionCount ?? document.sections.length;
  // The HTML reader keeps only the sections an answer can hold, and counts the rest.
  if (truncatedReason === null && sectionCount > sections.length) truncatedReason = 'max_sections';
  return {
    section_count: sectionCount,
    sections_returned: sections.length,
    char_count: chars,
    truncated: truncatedReason !== null,
    truncated_reason: truncatedReason,
    metadata: {
      ...(title ? { title } : {}),
      ...(document.author ? { author: document.author } : {}),
      ...(document.language ? { language: document.language } : {}),
    },
    sections,
  };
}

/** Characters normalised between two turns of the event loop: a few milliseconds' work. */
const TURN_AFTER_CHARS = 65_536;

/**
 * A heading cut to the contract's cap (headings cost no `max_chars`, so nothing else bounds
 * them), never between the halves of a surrogate pair.
 */
function capHeading<T extends string | null>(heading: T): T {
  if (heading === null || heading.length <= pdfLimits.maxHeadingChars) return heading;
  const last = heading.charCodeAt(pdfLimits.maxHeadingChars - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? pdfLimits.maxHeadingChars - 1 : pdfLimits.maxHeadingChars;
  return heading.slice(0, end).trimEnd() as T;
}
