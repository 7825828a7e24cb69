import type { DocumentExtraction, ExtractionWarning } from '@svc/schemas';
import type { RequestContext } from '../../http/request-context.ts';
import { ServiceError } from '../../service-error.ts';
import { detectFormat, detectTextFormat } from './document-sections.ts';
import { OFF_THREAD_DOCUMENT_CHARS, sectionOffThread } from './document-sections-pool.ts';
import type { PdfService } from './pdf-service.ts';
import { sectionTextDocument, type TextDocumentFormat } from './section-document.ts';

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
 * Documents into sections. HTML, Markdown and text are parsed by linear-time parsers over input
 * already capped by the body limit (section-document.ts): a small document here, in slices
 * between turns of the event loop, a large one (over 1 MiB of text, or the HTML of a large DOCX)
 * in a worker thread. DOCX (a ZIP, so possibly a bomb) is converted to HTML by mammoth in a
 * parser worker, and PDFs are extracted there, both under the same admission, rate limit,
 * deadlines and memory cap as the PDF routes.
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
  // The document as text, or as the UTF-8 bytes it was sent as (base64): bytes go to a worker as they are.
  let source: string | Buffer;
  let textFormat: TextDocumentFormat;
  if (format === 'docx') {
    await pdf.admit(request.principal, request);
    const converted = await pdf.convertDocx(bytes(), request, handlerStarted);
    warnings.push(...converted.warnings);
    [source, textFormat] = [converted.html, 'html'];
  } else {
    [source, textFormat] = [sentBytes ?? sentText ?? '', format];
  }
  const started = performance.now();
  const sectioned =
    source.length > OFF_THREAD_DOCUMENT_CHARS
      ? await sectionOffThread(source, textFormat, body.max_chars, request.signal)
      : await sectionTextDocument(typeof source === 'string' ? source : source.toString('utf8'), textFormat, body.max_chars, request.signal);
  request.timing.record('extract_ms', performance.now() - started);
  return { format, ...sectioned, warnings };
}
