import { z } from 'zod';
import { queryInt } from '../query.ts';
import { pdfLimits } from './limits.ts';

/** Bounds shared by the upload query and the JSON bodies. */
export const startPage = () => queryInt(1, 1_000_000).default(1);
export const maxPages = () => queryInt(1, pdfLimits.hardMaxPages).default(pdfLimits.defaultMaxPages);
export const maxChars = () => queryInt(1, pdfLimits.hardMaxChars).default(pdfLimits.defaultMaxChars);

export const PdfExtractQuery = z
  .object({
    start_page: startPage().describe('First page to extract, one-based.'),
    max_pages: maxPages().describe(`Most pages to extract (1..${pdfLimits.hardMaxPages}, default ${pdfLimits.defaultMaxPages}).`),
    max_chars: maxChars().describe(`Most characters to extract over all pages (1..${pdfLimits.hardMaxChars}, default ${pdfLimits.defaultMaxChars}).`),
  })
  .meta({ id: 'PdfExtractQuery' });

/** Hints about where the text sat on the page, for chunkers that care; never needed to read the text. */
export const PageLayout = z
  .object({
    width: z.number().nonnegative().describe('Page width in PDF points (1/72 in).'),
    height: z.number().nonnegative().describe('Page height in PDF points.'),
    rotation: z.number().int().describe('Page rotation in degrees (0, 90, 180, 270).'),
    line_count: z.number().int().nonnegative().describe('Lines of text found on the page.'),
  })
  .meta({ id: 'PageLayout' });

export const ExtractedPage = z
  .object({
    page_number: z.number().int().min(1).describe('One-based page number in the document.'),
    text: z
      .string()
      .describe(
        'Text of the page, normalised for retrieval: ligatures expanded, end-of-line hyphenation joined, whitespace collapsed, paragraphs separated by a blank line.',
      ),
    char_count: z.number().int().nonnegative().describe('Characters (UTF-16 code units) in `text`.'),
    truncated: z.boolean().optional().describe('True when `max_chars` cut this page short.'),
    layout: PageLayout.optional(),
  })
  .meta({ id: 'ExtractedPage' });
export type ExtractedPage = z.infer<typeof ExtractedPage>;

export const DocumentMetadata = z
  .object({
    title: z.string().optional(),
    author: z.string().optional(),
    subject: z.string().optional(),
    keywords: z.string().optional(),
    creator: z.string().optional(),
    producer: z.string().optional(),
    creation_date: z.string().optional().describe('ISO 8601 when the document states it.'),
    modification_date: z.string().optional().describe('ISO 8601 when the document states it.'),
    pdf_version: z.string().optional(),
    language: z.string().optional(),
  })
  .meta({ id: 'DocumentMetadata' });
export type DocumentMetadata = z.infer<typeof DocumentMetadata>;

export const ExtractionWarning = z
  .object({
    code: z.string().describe('Stable code: `page_failed`, `no_text_layer`, `metadata_unreadable`, `start_page_beyond_end`, ...'),
    message: z.string(),
    page_number: z.number().int().min(1).optional(),
  })
  .meta({ id: 'ExtractionWarning' });
export type ExtractionWarning = z.infer<typeof ExtractionWarning>;

export const TruncationReason = z.enum(['max_pages', 'max_chars', 'max_sections']).meta({ id: 'TruncationReason' });

export const PdfEngineName = z.enum(['pdfium', 'pdfjs', 'mupdf']).meta({ id: 'PdfEngineName' });
export type PdfEngineName = z.infer<typeof PdfEngineName>;

/** Everything about an extraction except its pages: the streamed summary and the JSON answer share it. */
export const PdfExtractionSummary = z
  .object({
    engine: PdfEngineName,
    page_count: z.number().int().nonnegative().describe('Pages in the whole document.'),
    start_page: z.number().int().min(1),
    pages_returned: z.number().int().nonnegative(),
    char_count: z.number().int().nonnegative().describe('Characters over the returned pages.'),
    truncated: z.boolean().describe('True when pages or characters after the returned ones were left out.'),
    truncated_reason: TruncationReason.nullable(),
    metadata: DocumentMetadata,
    warnings: z.array(ExtractionWarning),
    timings_ms: z
      .record(z.string(), z.number().nonnegative())
      .optional()
      .describe('The Server-Timing phases, for streamed answers whose headers left before the work was done.'),
  })
  .meta({ id: 'PdfExtractionSummary' });
export type PdfExtractionSummary = z.infer<typeof PdfExtractionSummary>;

export const PdfExtraction = PdfExtractionSummary.extend({ pages: z.array(ExtractedPage) }).meta({ id: 'PdfExtraction' });
export type PdfExtraction = z.infer<typeof PdfExtraction>;

const httpsUrl = z.url({ protocol: /^https$/, error: 'Only https URLs are fetched.' });

export const PdfExtractRequest = z
  .strictObject({
    data_base64: z.base64().optional().describe('The PDF bytes, base64 (standard alphabet, padded).'),
    url: httpsUrl
      .optional()
      .describe(
        "An https URL to fetch the PDF from (same byte cap). Every address its host resolves to, and every redirect's, must be public unicast (ipaddr.js ranges, IPv4-in-IPv6 forms judged by the IPv4 they carry), else 422 `source_url_refused`. At most 3 redirects; one deadline (SVC_PDF_FETCH_TIMEOUT_MS, default 10 s) bounds the whole download, every hop's lookup, headers and body together, else 422 `source_fetch_failed`.",
      ),
    password: z.string().max(1024).optional().describe('Password of an encrypted PDF.'),
    start_page: startPage(),
    max_pages: maxPages(),
    max_chars: maxChars(),
    stream: z.boolean().default(false).describe('Answer a server-sent event stream: `page-extracted` per page, then `extraction-completed`.'),
  })
  .refine((body) => (body.data_base64 === undefined) !== (body.url === undefined), {
    message: 'Send exactly one of data_base64 and url.',
    path: ['data_base64'],
  })
  .meta({ id: 'PdfExtractRequest' });
export type PdfExtractRequest = z.input<typeof PdfExtractRequest>;

/** One event of the PDF stream; its `event` name says which member `data` is. */
export const PdfStreamError = z.object({ code: z.string(), error: z.string() }).meta({ id: 'StreamError' });
export const PdfStreamEvent = z.union([ExtractedPage, PdfExtractionSummary, PdfStreamError]).meta({ id: 'PdfStreamEvent' });
export const pdfStreamEventNames = { page: 'page-extracted', completed: 'extraction-completed', error: 'error' } as const;
