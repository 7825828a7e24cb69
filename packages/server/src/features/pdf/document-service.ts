import { pdfLimits, type DocumentExtraction, type DocumentSection, type ExtractionWarning } from '@svc/schemas';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RequestContext } from '../../http/request-context.ts';
import { ServiceError } from '../../service-error.ts';
import { detectFormat, detectTextFormat, sectionPlainText, type SectionedDocument } from './document-sections.ts';
import { sectionHtmlInSlices } from './html-sections.ts';
import { sectionMarkdownInSlices } from './markdown-sections.ts';
import { normaliseTextInSlices } from './normalise-in-slices.ts';
import type { PdfService } from './pdf-service.ts';

export interface DocumentRequest {
  text?: string;
  data_base64?: string;
  format?: DocumentExtraction['format'];
  filename?: string;
  start_page: number;
  max_pages: number;
  max_chars: number;
}

/**
 * Documents into sections. HTML, Markdown and text are parsed in the request (linear-time
 * parsers over input already capped by the body limit); HTML, the HTML mammoth makes of a
 * DOCX, and Markdown, in slices between turns of the event loop, since even linear work on 16 MiB
 * takes a second. DOCX (a ZIP, so possibly a bomb) is
 * converted to HTML by mammoth in a parser worker, and PDFs are extracted there, both under the
 * same admission, rate limit, deadlines and memory cap as the PDF routes.
 */
export async function extractDocument(body: DocumentRequest, request: RequestContext, pdf: PdfService, handlerStarted: number): Promise<DocumentExtraction> {
  // Text stays text: encoding 16 MiB to UTF-8 and decoding it back took 70 ms at once.
  const sentText = body.text;
  const sentBytes = sentText === undefined ? await pdf.source({ kind: 'base64', data: body.data_base64 ?? '' }, request) : undefined;
  const format = sentBytes ? detectFormat(sentBytes, body.format, body.filename) : detectTextFormat(sentText ?? '', body.format, body.filename);
  if (!format)
    throw new ServiceError(
      'document_format_unknown',
      'The format could not be told from the content or the filename; set `format` to html, markdown, text, docx or pdf.',
    );
  // Only PDF and DOCX go to a worker: the queue place held since the request's head is not needed.
  if (format !== 'pdf' && format !== 'docx') pdf.releasePlace(request);
  const bytes = () => sentBytes ?? Buffer.from(sentText ?? '', 'utf8');

  if (format === 'pdf') {
    await pdf.admit(request.principal, request);
    const extraction = await pdf.extract(bytes(), { startPage: body.start_page, maxPages: body.max_pages, maxChars: body.max_chars }, request, handlerStarted);
    return {
      format,
      section_count: extraction.page_count,
      sections_returned: extraction.pages_returned,
      char_count: extraction.char_count,
      truncated: extraction.truncated,
      truncated_reason: extraction.truncated_reason,
      metadata: extraction.metadata,
      warnings: extraction.warnings,
      sections: extraction.pages.map((page, index) => ({
        section_number: index + 1,
        heading: null,
        level: 0,
        page_number: page.page_number,
        text: page.text,
        char_count: page.char_count,
      })),
    };
  }

  const warnings: ExtractionWarning[] = [];
  let document: SectionedDocument;
  const started = performance.now();
  if (format === 'docx') {
    await pdf.admit(request.principal, request);
    const converted = await pdf.convertDocx(bytes(), request, handlerStarted);
    warnings.push(...converted.warnings);
    document = await sectionHtmlInSlices(converted.html, request.signal);
  } else {
    const text = sentBytes?.toString('utf8') ?? sentText ?? '';
    document =
      format === 'html'
        ? await sectionHtmlInSlices(text, request.signal)
        : format === 'markdown'
          ? await sectionMarkdownInSlices(text, request.signal)
          : sectionPlainText(text);
  }

  const heading = async (raw: string | null) =>
    raw === null ? null : capHeading(document.headingsToNormalise ? await normaliseTextInSlices(raw, pdfLimits.maxHeadingChars, request.signal) : raw);
  const sections: DocumentSection[] = [];
  let chars = 0;
  // Short texts are normalised at once, so 10,000 of them take a turn of the event loop now and then.
  let sinceTurn = 0;
  let truncatedReason: 'max_chars' | 'max_sections' | null = null;
  for (const raw of document.sections) {
    if (chars >= body.max_chars) {
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
      request.signal.throwIfAborted();
    }
    let text = await normaliseTextInSlices(raw.text, body.max_chars - chars, request.signal);
    if (chars + text.length > body.max_chars) {
      text = text.slice(0, body.max_chars - chars);
      truncatedReason = 'max_chars';
    }
    chars += text.length;
    sections.push({
      section_number: sections.length + 1,
      heading: await heading(raw.heading),
      level: raw.level,
      page_number: null,
      text,
      char_count: text.length,
    });
    if (truncatedReason) break;
  }
  const title = document.title === undefined ? undefined : (await heading(document.title)) || undefined;
  const sectionCount = document.sectionCount ?? document.sections.length;
  // The HTML reader keeps only the sections an answer can hold, and counts the rest.
  if (truncatedReason === null && sectionCount > sections.length) truncatedReason = 'max_sections';
  request.timing.record('extract_ms', performance.now() - started);
  return {
    format,
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
    warnings,
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
